"""The `gradtrace` command: run a snippet as the web app would, or print its trace."""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from app.execution import run_snippet


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gradtrace", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a snippet and print what it printed")
    run.add_argument("file", type=pathlib.Path)
    trace = commands.add_parser("trace", help="run a snippet and print its trace as JSON")
    trace.add_argument("file", type=pathlib.Path)
    args = parser.parse_args(argv)

    try:
        code = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        print(f"gradtrace: cannot read {args.file}: {error}", file=sys.stderr)
        return 2
    result = run_snippet(code)
    outcome = result["outcome"]
    if args.command == "trace":
        json.dump(result, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(result["stdout"])
        sys.stdout.flush()
    if outcome["status"] == "ok":
        return 0
    if args.command == "run":
        _report_failure(outcome)
    return 1


def _report_failure(outcome: dict) -> None:
    """End stderr with `ErrorType: message`, as Python does for an uncaught exception."""
    span = outcome.get("span")
    if span:
        print(f'  File "<snippet>", line {span[0]}', file=sys.stderr)
    kind = outcome.get("type") or outcome["status"]
    message = outcome.get("message", "")
    print(f"{kind}: {message}" if message else kind, file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
