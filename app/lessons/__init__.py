"""Lessons and quick checks: Markdown files with a validated front matter, played beside the
player, whose answers are held to the trace of their own snippet.

Modules, one concept each: `model` (what a lesson and its questions are), `source` (reading a
file), `facts` (what a trace proves), `quiz` (a question against its trace), `grading` (a
form in, feedback out), `generated` (questions for any trace), `check` (`gradtrace lessons
check`), `library` (the lessons a site serves).
"""
