"""The server's log: one JSON object per line, on stderr, each with its request's id.

One object per line is what log collectors (journald, Docker, Loki, CloudWatch) read without a
parser of their own, and a message with a newline in it (a traceback, a learner's text) stays
one record. The standard library's logging writes it: a small formatter, no dependency.
`gradtrace serve` configures it (`configure`), uvicorn's own loggers included.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

from app import request_ids

# what every LogRecord has: anything else on a record came from `extra=` and is written too
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",  # uvicorn's message again, with terminal colours
}


def stamp_request_ids() -> None:
    """Every log record carries the id of the request it was written for, read as it is made:
    a handler may format it later, elsewhere (a queue's thread, a test's capture), where the
    request's context is not. Installed once per process, however often asked."""
    make = logging.getLogRecordFactory()
    if getattr(make, "stamps_request_ids", False):
        return

    def stamped(*args, **kwargs) -> logging.LogRecord:
        record = make(*args, **kwargs)
        record.request_id = request_ids.current.get()
        return record

    stamped.stamps_request_ids = True
    logging.setLogRecordFactory(stamped)


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        ident = getattr(record, "request_id", None)
        if ident is not None:
            line["request_id"] = ident
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in line and key != "request_id":
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        # default=str: an extra JSON cannot write is written as text; ASCII escapes keep any
        # text (a lone surrogate, a control character) one writable line
        return json.dumps(line, default=str)


def configure(level: int = logging.INFO) -> None:
    """Every log line as JSON on stderr, from the root logger down (uvicorn's loggers have no
    handlers of their own when its `log_config` is None, so theirs arrive here too)."""
    stamp_request_ids()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
