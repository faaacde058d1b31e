"""The Tracer: records what the engine does while a snippet runs, as a trace.

The trace is plain JSON, the contract between the engine and the rest of gradtrace; its shape is
described in docs/trace-format.md and fixed by docs/trace.schema.json. The engine calls the
`on_*` hooks below through `engine.tracing.current`; `trace_snippet` runs a snippet under a
Tracer and returns the trace.

Where things happened comes from the snippet's own frame: the instruction it is executing maps,
through `co_positions()`, to the exact columns of the sub-expression (so `a*b + a` gives two
spans on one line). Names come from the snippet's variables, looked at whenever the snippet has
moved on to another instruction since the last look. `nn.Module.__call__` says when each module
call starts and ends, so every event made inside one names it.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import io
import itertools
import re
import sys
import types
import warnings
import weakref
from collections.abc import Callable
from types import CodeType

import numpy as np

from engine import grad_mode, tracing
from engine import random as rng
from engine.graph import AccumulateGrad, Node
from engine.nn.modules import Module
from engine.snippet import (
    SNIPPET_FILENAME,
    Importer,
    compile_snippet,
    reset_engine_state,
    snippet_globals,
)
from engine.tensor import Tensor
from engine.trace_values import ValueTable, dtype_name

TRACE_VERSION = 1
DEFAULT_MAX_EVENTS = 20_000
LABEL_LIMIT = 40  # longest expression kept as a label, in characters
LIST_LIMIT = 16  # tensors in lists and tuples up to this long are labelled xs[0], xs[1], ...
ALIAS_LIMIT = 16  # other tensors an in-place change lists as sharing the changed memory
EXPOSED_LIMIT = 16  # tensors whose memory .numpy() handed out, watched for writes
EXPOSED_ELEMENTS = 1 << 16  # ... holding at most this many numbers in all (compared per event)
MODULE_DEPTH_LIMIT = 16  # nested module calls listed; deeper ones' events go to the 16th

# What a snippet's names mostly hold, and never a tensor to label (exact types: a subclass of
# one of them could hold tensors, so it is looked at)
_NEVER_LABELS = frozenset(
    {
        int,
        float,
        bool,
        str,
        type(None),
        type,
        dict,
        range,
        types.FunctionType,
        types.BuiltinFunctionType,
        types.ModuleType,
    }
)

# Python's collector walks every live container in a full (generation 2) pass, and a traced run
# keeps a growing graph and trace alive: with the default thresholds those passes took a third of
# a traced loop's time. Full passes wait 10 times longer here; generations 0 and 1, which free a
# snippet's short-lived garbage, keep their usual pace, so memory stays bounded as before.
GC_THRESHOLDS = (700, 10, 100)

# Each Tracer stamps ids with its own generation, so a tensor that outlived an earlier trace in
# the same process is never mistaken for one of this trace's.
_generations = itertools.count(1)

# `<MulBackward0 object at 0x7f...>`: addresses differ per run; traces must not.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")

# Ends the printed text when max_output cuts it, so the cut is visible where the output is.
OUTPUT_TRUNCATED = "\n[output truncated: more than {limit} printed]\n"


class Truncated(BaseException):
    """Raised inside a hook when the event cap is reached, to abandon the event it was
    recording; the hook's `_recording` wrapper catches it, so the snippet never sees it."""


def _recording(hook):
    """A hook that records nothing once the event cap has stopped recording (`Tracer.truncated`).

    Past the cap the snippet runs on, untraced: the tracer leaves `engine.tracing.current`, but
    a caller holding it already (a backward in progress, a module call) may still call in. The
    hook that reached the cap is abandoned where it was, as `settle` tidies up after.
    """

    @functools.wraps(hook)
    def recorded(self, *args, **kwargs):
        if self.truncated:
            return None
        try:
            return hook(self, *args, **kwargs)
        except Truncated:
            return None

    return recorded


class Stopped(BaseException):
    """Raised into a running snippet to end it with an outcome of its own (`output_limit`,
    or a limit the sandbox enforces, such as `cpu_limit`); the trace keeps what came before.
    """

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Tracer:
    """Collects tensors, nodes and events while installed as `engine.tracing.current`.

    `trace_snippet` is the usual way in. By hand: `engine.snippet.reset_engine_state()` (or
    `unseeded_random` may carry an earlier run's draws), `with Tracer(code) as tracer:` run code
    compiled with the filename "<snippet>", then `tracer.finish(its_globals)` and
    `tracer.trace()`.
    """

    def __init__(
        self,
        code: str = "",
        *,
        max_events: int = DEFAULT_MAX_EVENTS,
        max_output: int | None = None,
    ) -> None:
        self.code = code
        self.max_events = max_events
        self.max_output = max_output  # UTF-8 bytes of stdout, and of stderr apart; None: no cap
        self.tensors: dict[str, dict] = {}
        self.nodes: dict[str, dict] = {}
        self.events: list[dict] = []
        # recording stopped at the event cap (the snippet ran on, untraced), at this line
        self.truncated = False
        self.stopped_line: int | None = None
        self.outcome: dict = {"status": "ok"}
        # drew from torch's default generator before any manual_seed (known once the run ends)
        self.unseeded_random = False
        self.top_code: CodeType | None = None  # the snippet's module code, when known
        self._generation = next(_generations)
        self._tensor_count = 0
        self._node_count = 0
        self._module_count = 0
        self._stdout: list[str] = []
        self._stderr: list[str] = []
        self._lines = code.splitlines()
        self._positions: dict[CodeType, list] = {}
        self._expressions: dict[tuple, str] = {}
        self._named: set[str] = set()  # tensors labelled with a name rather than an expression
        self._seen_modules: dict[int, tuple] = {}  # id -> (module, #parameters, #children)
        self.modules: list[dict] = []  # the module calls listed so far (the trace's "modules")
        self._known_modules: dict[int, _KnownModule] = {}  # id(module) -> what is known of it
        self._calls: list[Module] = []  # the module calls running now, outermost first
        self._listed_calls: list[int] = []  # the indexes in `modules` of the first of them
        self._top_frame = None
        self._where_frame = None
        self._where_call = None
        self._where_lasti = -1
        self._where_span: list | None = None
        self._values = ValueTable()
        self._backward_handles: dict[int, tuple] = {}  # id(array) -> (array, handle)
        self._backward_span: list | None = None  # what a backward() does happens at its call
        self._addresses: dict[str, str] = {}
        self._previous = None
        self._output_used = {"stdout": 0, "stderr": 0}
        self._stopped: dict | None = None  # the outcome of a Stopped, which no later error undoes
        # memory shared between tensors: id(owning array) -> (weakref to it, weakrefs to the
        # traced tensors whose arrays were made from it), so an alias is found without a scan
        self._storage: dict[int, tuple] = {}
        # tensors whose memory .numpy() handed out: [weakref, the values last recorded]
        self._exposed: list[list] = []
        self._exposed_elements = 0
        self._noticing = False

    # ***** installing *****

    def __enter__(self) -> Tracer:
        self._previous = tracing.current
        tracing.current = self
        return self

    def __exit__(self, *exc) -> None:
        tracing.current = self._previous
        self.unseeded_random = rng.default_generator.drew_unseeded
        self._where_frame = self._where_call = self._top_frame = None

    def trace(self) -> dict:
        """The trace as a JSON-ready dict (strict JSON: no nan or inf anywhere)."""
        self._values.resolve()
        return {
            "version": TRACE_VERSION,
            "code": self.code,
            "tensors": self.tensors,
            "nodes": self.nodes,
            "modules": self.modules,
            "events": self.events,
            "stdout": "".join(self._stdout),
            "stderr": "".join(self._stderr),
            "outcome": self._stopped or self.outcome,
            "limits": {
                "truncated": self.truncated,
                "max_events": self.max_events,
                "stopped_line": self.stopped_line,
            },
            "unseeded_random": self.unseeded_random,
        }

    # ***** hooks the engine calls *****

    @_recording
    def on_tensor(self, t: Tensor, op: str, inputs: tuple) -> None:
        span = self._where()
        ids = self._input_ids(inputs, span)
        seq = self._seq()
        tid = self._add_tensor(t, seq, span)
        event = {"seq": seq, "kind": "tensor", "tensor": tid, "op": op, "inputs": ids, "span": span}
        self._append_in_call(event)

    @_recording
    def on_op(self, node: Node, outs: tuple, inputs: tuple, recorded: bool) -> None:
        span = self._where()
        ids = self._input_ids(inputs, span)
        seq = self._seq()
        node_id = self._add_node(node, seq, ids) if recorded else None
        out_ids = [self._add_tensor(t, seq, span) for t in outs]
        if node_id is not None:
            self.nodes[node_id]["outputs"] = out_ids
        event = {
            "seq": seq,
            "kind": "op",
            "name": node.name(),
            "node": node_id,
            "inputs": ids,
            "outputs": out_ids,
            "span": span,
        }
        self._append_in_call(event)

    @_recording
    def on_inplace(
        self, target: Tensor, node: Node | None, inputs: tuple, recorded: bool, op=None
    ) -> None:
        span = self._where()
        others = self._aliases(target)
        if self._exposed:  # the change is this event, not a write behind the engine's back
            self._refresh_exposed((target, *others))
        ids = self._input_ids(inputs, span)
        target_id = self._ensure(target, span)
        seq = self._seq()
        node_id = None
        if recorded:
            node_id = self._add_node(node, seq, ids)
            self.nodes[node_id]["outputs"] = [target_id]
        event = {
            "seq": seq,
            "kind": "inplace",
            "tensor": target_id,
            "name": op if op is not None else node.name(),
            "node": node_id,
            "inputs": ids,
            "version": target._version_counter.value,
            "value": None,
            "span": span,
        }
        self._values.put(event, "value", target._array)
        self._put_aliases(event, target, others)
        self._append_in_call(event)

    @_recording
    def on_data_set(self, t: Tensor, source: Tensor) -> None:
        """`t.data = source`: t now holds source's memory (no version bump, as in PyTorch)."""
        span = self._where()
        self._refresh_exposed((t,))  # the new values are this event's, not a write's
        tid = self._ensure(t, span)
        source_id = self._ensure(source, span)
        seq = self._seq()
        self._register(t)
        event = {
            "seq": seq,
            "kind": "data_set",
            "tensor": tid,
            "source": source_id,
            "value": None,
            "span": span,
        }
        self._values.put(event, "value", t._array)
        self.events.append(event)

    @_recording
    def on_rewrite(self, t: Tensor, op: str) -> None:
        """`op`'s kernel wrote new values into t without bumping its version (BatchNorm's running
        statistics): a `write` event naming the op, so the boxes show the new values."""
        span = self._where()
        target_id = self._ensure(t, span)
        event = {
            "seq": self._seq(),
            "kind": "write",
            "tensor": target_id,
            "op": op,
            "value": None,
            "span": span,
        }
        self._values.put(event, "value", t._array)
        self._put_aliases(event, t, self._aliases(t))
        self.events.append(event)

    @_recording
    def on_numpy(self, t: Tensor) -> None:
        """`t.numpy()` hands out t's memory: watch t, so a write into it becomes an event."""
        if self._tid(t) is None or len(self._exposed) >= EXPOSED_LIMIT:
            return
        if any(ref() is t for ref, _ in self._exposed):
            return
        size = t._array.size
        if self._exposed_elements + size > EXPOSED_ELEMENTS:
            return
        self._exposed_elements += size
        self._exposed.append([weakref.ref(t), t._array.copy()])

    @_recording
    def on_grad_mode(self, enabled: bool) -> None:
        span = self._where()
        seq = self._seq()
        self.events.append({"seq": seq, "kind": "grad_mode", "enabled": enabled, "span": span})

    @_recording
    def on_retain_grad(self, t: Tensor) -> None:
        span = self._where()
        tid = self._ensure(t, span)
        seq = self._seq()
        self.events.append(
            {"seq": seq, "kind": "retain_grad", "tensor": tid, "captured": False, "span": span}
        )

    @_recording
    def on_grad_set(self, t: Tensor) -> None:
        """The program replaced `t.grad` (`x.grad = g`, `del x.grad`, zero_grad())."""
        span = self._where()
        tid = self._ensure(t, span)
        grad = t._grad
        grad_id = None if grad is None else self._ensure(grad, span)
        seq = self._seq()
        event = {
            "seq": seq,
            "kind": "grad_set",
            "tensor": tid,
            "grad": None,
            "grad_tensor": grad_id,
            "span": span,
        }
        if grad is not None:
            self._values.put(event, "grad", grad._array)
        self.events.append(event)

    @_recording
    def on_backward_begin(self, tensors, root_grads, keep_graph: bool) -> None:
        span = self._backward_span = self._where()
        ids = [self._ensure(t, span) for t in tensors]
        seq = self._seq()
        self._backward_handles = {}
        self.events.append(
            {
                "seq": seq,
                "kind": "backward_begin",
                "roots": ids,
                "grads": self._grad_list(root_grads),
                "retain_graph": keep_graph,
                "span": span,
            }
        )

    @_recording
    def on_node_backward(self, node: Node, grads_out, grad_inputs, sources) -> None:
        span = self._backward_where()
        seq = self._seq()
        self.events.append(
            {
                "seq": seq,
                "kind": "node_backward",
                "node": self._node_id(node, seq),
                "grad_outputs": self._grad_list(grads_out),
                "grad_inputs": self._grad_list(grad_inputs),
                "sources": self._sources(sources, seq),
                "span": span,
            }
        )

    @_recording
    def on_accumulate(self, node, leaf: Tensor, contribution, total, sources) -> None:
        span = self._backward_where()
        leaf_id = self._ensure(leaf, span)
        seq = self._seq()
        if self._tid(leaf._grad) is None and np.array_equal(total, contribution):
            # a new .grad: the engine copied the contribution
            total_handle = self._grad_handle(contribution)
        else:  # the running total, changed in place since: a snapshot of its own
            total_handle = self._values.add(total)
        grad_id = self._grad_tensor(leaf, leaf_id, seq, span, total_handle)
        event = {
            "seq": seq,
            "kind": "accumulate",
            "tensor": leaf_id,
            "node": self._node_id(node, seq),
            "contribution": None,
            "grad": None,
            "grad_tensor": grad_id,
            "sources": self._sources(sources, seq),
            "span": span,
        }
        self._put_grad(event, "contribution", contribution)
        self._values.place(event, "grad", total_handle)
        self.events.append(event)

    @_recording
    def on_retained_grad(self, t: Tensor, g) -> None:
        span = self._backward_where()
        tid = self._ensure(t, span)
        seq = self._seq()
        handle = self._values.add(t._grad._array)
        grad_id = self._grad_tensor(t, tid, seq, span, handle)
        event = {
            "seq": seq,
            "kind": "retain_grad",
            "tensor": tid,
            "captured": True,
            "grad": None,
            "grad_tensor": grad_id,
            "span": span,
        }
        self._values.place(event, "grad", handle)
        self.events.append(event)

    @_recording
    def on_backward_end(self, freed_nodes: list, keep_graph: bool) -> None:
        if freed_nodes:
            seq = self._seq()
            self.events.append(
                {
                    "seq": seq,
                    "kind": "free",
                    "nodes": [self._node_id(node, seq) for node in freed_nodes],
                    "span": self._backward_where(),
                }
            )
        seq = self._seq()
        self.events.append(
            {
                "seq": seq,
                "kind": "backward_end",
                "retain_graph": keep_graph,
                "span": self._backward_where(),
            }
        )
        self._backward_handles = {}

    def enter_module(self, module: Module) -> None:
        """A module call starts. It is listed only once something is recorded inside it."""
        self._calls.append(module)

    def exit_module(self, module: Module) -> None:
        calls = self._calls
        if calls and calls[-1] is module:  # (a call that began before this tracer did is not)
            if len(self._listed_calls) == len(calls):
                self._listed_calls.pop()
            calls.pop()

    # ***** what the snippet prints, warns and raises *****

    def print(self, *args, sep=" ", end="\n", file=None, flush=False) -> None:
        """The snippet's `print`: the text goes into the trace, one event per call."""
        if file is not None and file is not sys.stdout:
            print(*args, sep=sep, end=end, file=file, flush=flush)
            return
        buffer = io.StringIO()
        print(*args, sep=sep, end=end, file=buffer)
        self.on_output(buffer.getvalue())

    def on_output(self, text: str) -> None:
        if not text:
            return
        if " at 0x" in text:
            text = _ADDRESS.sub(self._stable_address, text)
        text, over = self._fit("stdout", text)
        if text:
            self._stdout.append(text)
            if not self.truncated:
                with contextlib.suppress(Truncated):
                    span = self._where()
                    self.events.append(
                        {"seq": self._seq(), "kind": "print", "text": text, "span": span}
                    )
        if over:
            raise self._output_stop()

    def on_error_output(self, text: str) -> None:
        """Text written to sys.stderr: kept in the trace's stderr, with no event."""
        text, over = self._fit("stderr", text)
        self._stderr.append(text)
        if over:
            raise self._output_stop()

    def _fit(self, stream: str, text: str) -> tuple[str, bool]:
        """What of `text` fits under the output cap (marked where it was cut), and whether the
        cap has been reached. Once it has, nothing more is kept."""
        if self.max_output is None:
            return text, False
        used = self._output_used[stream]
        if used > self.max_output:
            return "", True
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        if used + size <= self.max_output:
            self._output_used[stream] = used + size
            return text, False
        kept = text.encode("utf-8", "surrogatepass")[: self.max_output - used]
        self._output_used[stream] = self.max_output + 1
        marker = OUTPUT_TRUNCATED.format(limit=_amount(self.max_output))
        return kept.decode("utf-8", "ignore") + marker, True

    def _output_stop(self) -> Stopped:
        limit = _amount(self.max_output)
        return self.stop(
            "output_limit", f"The snippet printed more than {limit}; the output was cut there."
        )

    def stop(self, status: str, message: str) -> Stopped:
        """End the run with `status` (the first stop wins); raise what this returns."""
        if self._stopped is None:
            self._stopped = {"status": status, "message": message}
        return Stopped(status, message)

    def settle(self) -> None:
        """Forget tensors and nodes whose event was never written.

        A hook cut short (by MemoryError or a Stopped) may leave them, always last in their
        tables, since ids are handed out in event order.
        """
        done = len(self.events)
        for table in (self.tensors, self.nodes):
            while table:
                last = next(reversed(table))
                if table[last]["created"] < done:
                    break
                del table[last]

    def show_warning(self, message, category, filename, lineno, file=None, line=None) -> None:
        """Stands in for warnings.showwarning: the text goes to the trace's stderr."""
        if line is None and filename == SNIPPET_FILENAME and 0 < lineno <= len(self._lines):
            line = self._lines[lineno - 1]
        self.on_error_output(warnings.formatwarning(message, category, filename, lineno, line))

    def on_error(self, error: BaseException) -> None:
        """An exception the snippet did not catch: an `error` event and the outcome."""
        self.settle()
        if isinstance(error, SyntaxError) and error.filename == SNIPPET_FILENAME:
            message, span = error.msg, _syntax_error_span(error)
        else:
            message, span = str(error), self._traceback_span(error.__traceback__)
        if " at 0x" in message:
            message = _ADDRESS.sub(self._stable_address, message)
        kind = type(error).__name__
        self.outcome = {"status": "error", "type": kind, "message": message, "span": span}
        seq = len(self.events)
        # past the cap, the outcome alone says how the run ended (and if the error came just
        # at the cap, it is all that was not recorded: the trace is whole)
        if seq < self.max_events and not self.truncated:
            self.events.append(
                {"seq": seq, "kind": "error", "type": kind, "message": message, "span": span}
            )

    def finish(self, namespace: dict | None) -> None:
        """Last labels from the snippet's globals, once it has stopped."""
        self._where_frame = self._where_call = self._top_frame = None
        if namespace is not None:
            self._seen_modules = {}  # look again: parameters may have been added since
            self._relabel(namespace)
        # nothing more is recorded: let go of what only recording needed (the weak references
        # in _storage call back into this tracer, a cycle that would keep the whole trace
        # alive until the next full collection)
        self._storage, self._exposed, self._backward_handles = {}, [], {}

    # ***** ids *****

    def _seq(self) -> int:
        """The next event's number; past the cap, stop recording instead. A write into memory
        that .numpy() handed out is noticed here, as an event of its own before this one."""
        if self._exposed and not self._noticing:
            self.notice_writes(self._where_span)
        seq = len(self.events)
        if seq >= self.max_events:
            self._stop_recording()
            raise Truncated
        return seq

    def _stop_recording(self) -> None:
        """The cap is reached: the snippet runs on to its end, untraced, and only what it prints
        and raises is still kept, so its output is whole (the CPU, memory and output limits
        still hold). The trace says where recording stopped."""
        if self.truncated:
            return
        self.truncated = True
        self.stopped_line = self._running_line()
        if tracing.current is self:
            tracing.current = self._previous
        self._storage, self._exposed, self._backward_handles = {}, [], {}

    @staticmethod
    def _running_line() -> int | None:
        """The innermost snippet line running now."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != SNIPPET_FILENAME:
            frame = frame.f_back
        return frame.f_lineno if frame is not None else None

    def _tid(self, t: Tensor) -> str | None:
        stamp = t._trace_id
        if stamp is not None and stamp[0] == self._generation:
            return stamp[1]
        return None

    def _ensure(self, t: Tensor, span) -> str:
        """The tensor's id; one the engine made without telling us gets a `tensor` event now."""
        stamp = t._trace_id
        if stamp is not None and stamp[0] == self._generation:
            tid = stamp[1]
            record = self.tensors[tid]
            if record["requires_grad"] != t._requires_grad:
                record["requires_grad"] = t._requires_grad  # requires_grad_() after creation
            return tid
        seq = self._seq()
        tid = self._add_tensor(t, seq, span)
        self._append_in_call(
            {"seq": seq, "kind": "tensor", "tensor": tid, "op": None, "inputs": [], "span": span}
        )
        # a tensor the engine handed the snippet (the gradient a custom Function's backward is
        # given): named now, as the frame that holds it may be gone by the next event
        frame = self._where_frame
        if frame is not None:
            for name, value in frame.f_locals.items():
                if value is t:
                    self._name(t, name)
                    break
        return tid

    def _input_ids(self, inputs: tuple, span) -> list:
        return [self._ensure(x, span) if isinstance(x, Tensor) else None for x in inputs]

    def _add_tensor(self, t: Tensor, seq: int, span, label=None, handle=None) -> str:
        self._tensor_count += 1
        tid = f"t{self._tensor_count}"
        t._trace_id = (self._generation, tid)
        grad_fn = t.grad_fn
        record = self.tensors[tid] = {
            "label": label if label is not None else self._expression(span),
            "shape": list(t._array.shape),
            "dtype": dtype_name(t._array.dtype),
            "requires_grad": t._requires_grad,
            "is_leaf": grad_fn is None,
            "grad_fn": None if grad_fn is None else self._node_id(grad_fn, seq),
            "value": None,
            "created": seq,
        }
        if handle is None:
            handle = self._values.add(t._array)
        self._values.place(record, "value", handle)
        self._register(t)
        return tid

    # ***** module calls *****

    def _append_in_call(self, event: dict) -> None:
        """Record a tensor, op or inplace event, with the module call it happened in if any.

        Last, once nothing can stop the event being recorded: a call is listed only for an
        event that is."""
        if self._calls:
            event["module"] = self._innermost_call()
        self.events.append(event)

    def _innermost_call(self) -> int:
        """The index in `modules` of the innermost listed call running now, listing the calls
        around it first (parents before children), down to MODULE_DEPTH_LIMIT deep."""
        listed, calls = self._listed_calls, self._calls
        depth = min(len(calls), MODULE_DEPTH_LIMIT)
        while len(listed) < depth:
            known = self._known_module(calls[len(listed)])
            if known.token is None:
                self._module_count += 1
                known.token = f"m{self._module_count}"
            call = {
                "module": known.token,
                "name": known.name,
                "type": type(known.module).__name__,
                "parent": listed[-1] if listed else None,
            }
            known.calls.append(call)
            listed.append(len(self.modules))
            self.modules.append(call)
        return listed[-1]

    def _known_module(self, module: Module) -> _KnownModule:
        known = self._known_modules.get(id(module))
        if known is None:  # holding the module keeps its id from being reused
            known = self._known_modules[id(module)] = _KnownModule(module)
        return known

    def _name_module(self, module: Module, name: str) -> None:
        """The first name a module is found under names all its calls, listed or to come."""
        known = self._known_module(module)
        if known.name is None:
            known.name = name
            for call in known.calls:
                call["name"] = name

    # ***** memory shared between tensors *****

    def _register(self, t: Tensor) -> None:
        """File t under the array that owns its memory (views, .data, detach() share one)."""
        owner = _owner(t._array)
        key = id(owner)
        group = self._storage.get(key)
        if group is None or group[0]() is not owner:
            ref = _OwnerRef(owner, self._forget)
            ref.key = key
            group = self._storage[key] = (ref, [])
        group[1].append(weakref.ref(t))

    def _forget(self, ref: _OwnerRef) -> None:
        """The owning array is gone: so are all its tensors."""
        group = self._storage.get(ref.key)
        if group is not None and group[0] is ref:
            del self._storage[ref.key]

    def _aliases(self, t: Tensor) -> list[Tensor]:
        """The other traced tensors, still alive, whose memory overlaps t's."""
        owner = _owner(t._array)
        group = self._storage.get(id(owner))
        if group is None or group[0]() is not owner:
            return []
        found, alive = [], []
        for ref in group[1]:
            other = ref()
            if other is None:
                continue
            alive.append(ref)
            if other is not t and self._tid(other) is not None and _overlap(other._array, t._array):
                found.append(other)
        group[1][:] = alive
        return found

    def _put_aliases(self, event: dict, t: Tensor, others: list[Tensor]) -> None:
        """List in `event` what a change of t's memory did to the tensors sharing it."""
        if others:
            listed = event["aliases"] = []
            for other in others[:ALIAS_LIMIT]:
                entry = {"tensor": self._tid(other), "value": None}
                entry["version"] = other._version_counter.value
                self._values.put(entry, "value", other._array)
                listed.append(entry)
        if self._exposed:
            self._refresh_exposed((t, *others))

    def _refresh_exposed(self, changed) -> None:
        """The trace now knows these tensors' values: compare later writes with them."""
        for entry in self._exposed:
            t = entry[0]()
            if t is not None and any(t is c for c in changed):
                entry[1] = t._array.copy()

    def notice_writes(self, span) -> None:
        """A `write` event for each watched tensor whose values changed with no engine call:
        through the array .numpy() returned. Placed where it is noticed (see the docs)."""
        self._noticing = True
        try:
            for entry in list(self._exposed):
                t = entry[0]()
                if t is None:
                    self._exposed.remove(entry)
                    self._exposed_elements -= entry[1].size
                    continue
                if np.array_equal(t._array, entry[1], equal_nan=_has_nan(entry[1])):
                    continue
                seq = self._seq()
                event = {
                    "seq": seq,
                    "kind": "write",
                    "tensor": self._tid(t),
                    "value": None,
                    "span": None if span is None else [*span],
                }
                self._values.put(event, "value", t._array)
                self._put_aliases(event, t, self._aliases(t))
                entry[1] = t._array.copy()
                self.events.append(event)
        finally:
            self._noticing = False

    def _grad_tensor(self, owner: Tensor, owner_id: str, seq: int, span, handle) -> str:
        """The id of owner.grad, registered (as `<owner>.grad`) the first time it is seen."""
        grad = owner._grad
        grad_id = self._tid(grad)
        if grad_id is None:
            label = self.tensors[owner_id]["label"] + ".grad"
            grad_id = self._add_tensor(grad, seq, span, label=label, handle=handle)
            self._named.add(grad_id)
        return grad_id

    def _node_id(self, node: Node | None, seq: int) -> str | None:
        if node is None:
            return None
        stamp = node.trace_id
        if stamp is not None and stamp[0] == self._generation:
            return stamp[1]
        if isinstance(node, AccumulateGrad):
            return self._add_node(node, seq, [])
        # a node no op event made (a view's AsStridedBackward0, rebuilt after CopySlices): its
        # inputs are not tensors the trace saw, but it still has one slot per next edge
        return self._add_node(node, seq, [None] * len(node.next_functions))

    def _add_node(self, node: Node, seq: int, input_ids: list) -> str:
        self._node_count += 1
        nid = f"n{self._node_count}"
        node.trace_id = (self._generation, nid)
        if isinstance(node, AccumulateGrad):
            self.nodes[nid] = {
                "name": "AccumulateGrad",
                "inputs": [],
                "outputs": [],
                "next": [],
                "saved": [],
                "formula": node.formula,
                "created": seq,
                "variable": self._variable_id(node.variable, seq),
            }
            return nid
        record = self.nodes[nid] = {
            "name": node.name(),
            "inputs": input_ids,
            "outputs": [],
            "next": [],
            "saved": ["result" if what == "result" else input_ids[what] for what in node.to_save],
            "formula": node.formula,
            "created": seq,
        }
        # after the record, so the nodes it leads to (AccumulateGrad) get the next ids
        record["next"] = [[self._node_id(child, seq), nr] for child, nr in node.next_functions]
        return nid

    def _variable_id(self, leaf: Tensor, seq: int) -> str:
        # the leaf is an input of the op that reached it, so it is already known
        tid = self._tid(leaf)
        return tid if tid is not None else self._add_tensor(leaf, seq, None)

    def _sources(self, sources, seq: int) -> list:
        listed = []
        for sender, g in sources or ():
            source = {"from": self._node_id(sender, seq), "grad": None}
            self._put_grad(source, "grad", g)
            listed.append(source)
        return listed

    def _grad_list(self, arrays) -> list:
        values = [None] * len(arrays)
        for i, g in enumerate(arrays):
            if g is not None:
                self._put_grad(values, i, g)
        return values

    def _put_grad(self, container, key, array) -> None:
        self._values.place(container, key, self._grad_handle(array))

    def _grad_handle(self, array):
        """Snapshot a gradient once per array: one leaves a node and arrives at the next."""
        hit = self._backward_handles.get(id(array))
        if hit is None or hit[0] is not array:  # holding the array keeps its id unique
            hit = self._backward_handles[id(array)] = (array, self._values.add(array))
        return hit[1]

    def _stable_address(self, match: re.Match) -> str:
        fake = self._addresses.get(match.group())
        if fake is None:
            address = 0x7F0000001000 + 0x40 * len(self._addresses)
            fake = self._addresses[match.group()] = f" at {address:#x}>"
        return fake

    # ***** where, in the snippet *****

    def _where(self) -> list | None:
        """The span the snippet is executing; relabel first if it has moved on since.

        It has not moved on when the same call from the same instruction is still running (the
        many events of one backward() or model(x)); in a loop, the instruction is the same but
        the call is a new one.
        """
        frame, call = sys._getframe(1), None
        while frame is not None and frame.f_code.co_filename != SNIPPET_FILENAME:
            frame, call = frame.f_back, frame
        if frame is None:
            return None
        lasti = frame.f_lasti
        if call is self._where_call and lasti == self._where_lasti and frame is self._where_frame:
            span = self._where_span
            return None if span is None else [*span]
        # holding the frames keeps their ids from being reused by later calls
        self._where_frame, self._where_lasti, self._where_call = frame, lasti, call
        self._relabel_stack(frame)
        code = frame.f_code
        positions = self._positions.get(code)
        if positions is None:
            positions = self._positions[code] = self._spans_of(code)
        span = positions[lasti // 2] if lasti >= 0 else None
        if span is None:
            span = self._line_span(frame.f_lineno)
        self._where_span = span
        return None if span is None else [*span]

    def _backward_where(self) -> list | None:
        """The span of the backward() call running now, saved when it began."""
        span = self._backward_span
        return None if span is None else [*span]

    def _traceback_span(self, tb) -> list | None:
        """The span of the snippet line where an exception surfaced (its innermost one)."""
        span = None
        while tb is not None:
            code = tb.tb_frame.f_code
            if code.co_filename == SNIPPET_FILENAME:
                positions = self._positions.get(code)
                if positions is None:
                    positions = self._positions[code] = self._spans_of(code)
                found = positions[tb.tb_lasti // 2] if tb.tb_lasti >= 0 else None
                span = [*found] if found is not None else self._line_span(tb.tb_lineno)
            tb = tb.tb_next
        return span

    def _spans_of(self, code: CodeType) -> list:
        """[line, col, end_line, end_col] per instruction, columns counted in characters."""
        spans = []
        for line, end_line, col, end_col in code.co_positions():
            if line is None or end_line is None or col is None or end_col is None:
                spans.append(None)
            else:
                spans.append(
                    [line, self._char_col(line, col), end_line, self._char_col(end_line, end_col)]
                )
        return spans

    def _char_col(self, line: int, col: int) -> int:
        # co_positions counts UTF-8 bytes; the trace counts characters, as str indexing does
        if not 0 < line <= len(self._lines):
            return col
        text = self._lines[line - 1]
        if text.isascii():
            return col
        return len(text.encode()[:col].decode(errors="ignore"))

    def _line_span(self, line: int | None) -> list | None:
        if line is None or not 0 < line <= len(self._lines):
            return None
        text = self._lines[line - 1]
        return [line, len(text) - len(text.lstrip()), line, len(text)]

    def _expression(self, span) -> str:
        """The source text a span covers, as a label for a tensor no variable names."""
        if span is None:
            return "tensor"
        key = tuple(span)
        text = self._expressions.get(key)
        if text is None:
            line, col, end_line, end_col = span
            lines = self._lines[line - 1 : end_line]
            if lines:
                lines[-1] = lines[-1][:end_col] if line != end_line else lines[-1][col:end_col]
                if line != end_line:
                    lines[0] = lines[0][col:]
            text = " ".join(" ".join(lines).split())
            if len(text) > LABEL_LIMIT:
                text = text[: LABEL_LIMIT - 1] + "…"
            self._expressions[key] = text
        return text

    # ***** names *****

    def _relabel_stack(self, frame) -> None:
        """Label tensors after the snippet's variables: the outermost frame's names win.

        Only the outermost snippet frame (the module, for trace_snippet) and the innermost are
        read, so a deep recursion costs no more than a flat script.
        """
        top = self._top_frame
        if top is None:
            top = frame
            f = frame.f_back
            while f is not None:
                if f.f_code.co_filename == SNIPPET_FILENAME:
                    top = f
                f = f.f_back
            if top.f_code is self.top_code:
                self._top_frame = top  # the module frame lives as long as the run
        if top is not frame:
            self._relabel(top.f_locals)
        self._relabel(frame.f_locals)

    def _relabel(self, names: dict) -> None:
        for name, value in names.items():
            if type(value) in _NEVER_LABELS:
                continue  # most names: one set lookup (this runs at every new instruction)
            if isinstance(value, Tensor):
                self._name(value, name)
            elif isinstance(value, Module) and name != "self":
                # (a method's `self` would label parameters self.weight: wait for a real name)
                # walking the parameters is slow, so only when the module looks different
                state = vars(value)
                if "_parameters" not in state or "_modules" not in state:
                    continue  # a subclass that never called Module.__init__
                looks = (
                    value,
                    len(state["_parameters"]),
                    len(state["_modules"]),
                    len(state.get("_buffers", ())),
                )
                seen = self._seen_modules.get(id(value))
                if seen is None or seen[0] is not value or seen[1:] != looks[1:]:
                    self._seen_modules[id(value)] = looks
                    for path, module in value.named_modules():  # model, model[0], net.fc1
                        self._name_module(module, name + _python_path(path) if path else name)
                    for path, parameter in value.named_parameters():
                        self._name(parameter, name + _python_path(path))
                    for path, buffer in value.named_buffers():  # bn.running_mean
                        self._name(buffer, name + _python_path(path))
            elif type(value) in (list, tuple) and len(value) <= LIST_LIMIT:
                for i, item in enumerate(value):
                    if isinstance(item, Tensor):
                        self._name(item, f"{name}[{i}]")

    def _name(self, t: Tensor, name: str) -> None:
        """The first name a tensor is found under is its label; its .grad is `name.grad`."""
        stamp = t._trace_id  # self._tid(t), inlined: every tensor a snippet names passes here
        if stamp is not None and stamp[0] == self._generation and stamp[1] not in self._named:
            self._named.add(stamp[1])
            self.tensors[stamp[1]]["label"] = name
        grad = t._grad
        if grad is not None:
            grad_id = self._tid(grad)
            if grad_id is not None and grad_id not in self._named:
                self._named.add(grad_id)
                self.tensors[grad_id]["label"] = name + ".grad"


class _KnownModule:
    """What a trace knows of one module object: its token once a call of it is listed, its name
    once one is found, and its listed calls (named when it is)."""

    __slots__ = ("calls", "module", "name", "token")

    def __init__(self, module: Module) -> None:
        self.module = module
        self.token: str | None = None
        self.name: str | None = None
        self.calls: list[dict] = []


class _OwnerRef(weakref.ref):
    """A weak reference to an array that owns memory, which knows its key in Tracer._storage
    (one callback for them all, rather than a closure made per array)."""

    __slots__ = ("key",)


def _owner(array: np.ndarray) -> object:
    """The object that owns an array's memory (numpy keeps a view's base the owner)."""
    while isinstance(array, np.ndarray) and array.base is not None:
        array = array.base
    return array


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        return bool(np.shares_memory(a, b, max_work=1000))
    except np.exceptions.TooHardError:  # strides too tangled to solve cheaply: assume so
        return bool(np.may_share_memory(a, b))


def _has_nan(array: np.ndarray) -> bool:
    return array.dtype.kind in "fc" and bool(np.isnan(array).any())


def _amount(size: int) -> str:
    return f"{size // 1024} KiB" if size >= 1024 and size % 1024 == 0 else f"{size:,} bytes"


def _python_path(path: str) -> str:
    """A module's parameter path as Python reaches it: `0.weight` (named_parameters' form) is
    `[0].weight`, as a Sequential's or a ModuleList's children are indexed."""
    return "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in path.split("."))


def _syntax_error_span(error: SyntaxError) -> list | None:
    if not error.lineno:
        return None
    col = max((error.offset or 1) - 1, 0)
    end_line = error.end_lineno or error.lineno
    end_col = (error.end_offset or 0) - 1
    if end_line == error.lineno and end_col <= col:
        end_col = col + 1
    return [error.lineno, col, end_line, end_col]


def trace_snippet(
    code: str,
    *,
    max_events: int = DEFAULT_MAX_EVENTS,
    importer: Importer | None = None,
    max_output: int | None = None,
    make_tracer: Callable[..., Tracer] | None = None,
) -> dict:
    """Run `code` with `torch` resolving to the engine and return its trace.

    An exception the snippet does not catch ends the run with outcome "error"; reaching
    `max_events` ends it with `limits.truncated` set (and with outcome "event_limit", its
    message `event_limit(line)`, when that is given: the sandbox does); printing more than
    `max_output` bytes, or a `Stopped` raised into it, ends it with that outcome. Everything
    before any of them is kept. `make_tracer` (Tracer's arguments → a Tracer) lets a test
    watch the same run with a subclass.
    """
    options = {"max_events": max_events, "max_output": max_output}
    tracer = (make_tracer or Tracer)(code, **options)
    try:
        compiled = compile_snippet(code)
    except SyntaxError as error:
        tracer.on_error(error)
        return tracer.trace()
    tracer.top_code = compiled
    namespace = snippet_globals(importer, print_function=tracer.print)
    reset_engine_state()
    with _fewer_full_collections():
        return _run_traced(tracer, compiled, namespace)


def _run_traced(tracer: Tracer, compiled: CodeType, namespace: dict) -> dict:
    with _capturing(tracer), tracer:
        try:
            exec(compiled, namespace)
        except Stopped as stop:
            tracer.stop(stop.status, stop.message)
        except SystemExit as error:
            if error.code not in (None, 0):
                tracer.on_error(error)  # exit(0) is a normal end, as in Python
        except Exception as error:
            tracer.on_error(error)
    if not tracer.truncated and tracer.outcome["status"] == "ok" and tracer._stopped is None:
        with contextlib.suppress(Truncated):
            tracer.notice_writes(None)  # a write after the last engine call
    tracer.settle()
    grad_mode.state.enabled = True
    tracer.finish(namespace)
    return tracer.trace()


@contextlib.contextmanager
def _fewer_full_collections():
    """GC_THRESHOLDS for the duration of a run (the snippet may change them: they come back)."""
    previous = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*previous)


@contextlib.contextmanager
def _capturing(tracer: Tracer):
    """Send sys.stdout, sys.stderr and warnings to the tracer for the duration of a run."""
    with (
        warnings.catch_warnings(),
        contextlib.redirect_stdout(_Output(tracer.on_output)),
        contextlib.redirect_stderr(_Output(tracer.on_error_output)),
    ):
        warnings.simplefilter("default")
        warnings.showwarning = tracer.show_warning
        yield


class _Output(io.TextIOBase):
    """A stdout whose writes become `print` events (for code that bypasses print)."""

    def __init__(self, write: Callable[[str], None]) -> None:
        super().__init__()
        self._write = write

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._write(text)
        return len(text)
