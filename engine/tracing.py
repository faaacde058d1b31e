"""The one hook point between the engine and a Tracer.

`current` is None unless a Tracer is recording, so the engine pays one `if` per operation.
"""

current = None
