"""The `gradtrace` command: run a snippet as the web app would, print its trace, export it as a
file for slides and handouts, check lessons, copy or check a store, or serve the site."""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import pathlib
import sys
import threading

from app import execution
from app.config import Settings, SettingsError
from app.export.options import FORMATS, THEMES, VIEWS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gradtrace", description=__doc__)
    parser.add_argument("--version", action=_PrintVersion)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a snippet and print what it printed")
    run.add_argument("file", type=pathlib.Path)
    trace = commands.add_parser("trace", help="run a snippet and print its trace as JSON")
    trace.add_argument("file", type=pathlib.Path)
    lessons = commands.add_parser("lessons", help="work with lesson files")
    lesson_commands = lessons.add_subparsers(dest="lessons_command", required=True)
    check = lesson_commands.add_parser(
        "check", help="validate lessons: front matter, steps, spans and answers against the run"
    )
    check.add_argument("files", type=pathlib.Path, nargs="+", help="lesson files or folders")
    export = commands.add_parser(
        "export", help="run a snippet and save its trace as HTML, PDF, GIF or a zip of frames"
    )
    export.add_argument("file", type=pathlib.Path)
    export.add_argument("--format", required=True, choices=list(FORMATS))
    export.add_argument(
        "-o", "--output", type=pathlib.Path, help="default: FILE with the format's suffix"
    )
    export.add_argument("--from", dest="first", type=int, help="the first step to export (from 1)")
    export.add_argument("--to", dest="last", type=int, help="the last step to export")
    export.add_argument("--view", choices=VIEWS, default=VIEWS[0])
    export.add_argument("--theme", choices=THEMES, default=THEMES[0])
    export.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    store = commands.add_parser("store", help="copy a store to another, or check one")
    store_commands = store.add_subparsers(dest="store_command", required=True)
    copy = store_commands.add_parser(
        "copy", help="copy every trace from SRC to DST (a SQLite file or a postgresql:// URL)"
    )
    copy.add_argument("source", metavar="SRC")
    copy.add_argument("target", metavar="DST")
    check_store = store_commands.add_parser(
        "check", help="check that every stored trace decodes and is a valid trace"
    )
    check_store.add_argument(
        "location", nargs="?", metavar="URL_OR_PATH", help="default: the configured store"
    )
    serve = commands.add_parser("serve", help="serve the web app (sandbox checked first)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--allow-weak-sandbox",
        action="store_true",
        help="serve a public address even if some sandbox layer does not hold here (unsafe)",
    )
    args = parser.parse_args(argv)
    try:
        return _command(args)
    except SettingsError as error:  # a bad setting stops any command, naming its variable
        print(f"gradtrace: {error}", file=sys.stderr)
        return 2


def _command(args: argparse.Namespace) -> int:
    if args.command == "serve":
        return _serve(args.host, args.port, args.allow_weak_sandbox)
    if args.command == "lessons":
        return _check_lessons(args.files)
    if args.command == "export":
        return _export(args)
    if args.command == "store":
        return _store(args)

    try:
        code = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        print(f"gradtrace: cannot read {args.file}: {error}", file=sys.stderr)
        return 2
    _warn_if_weak()
    result = execution.run_snippet(code)
    outcome = result["outcome"]
    if args.command == "trace":
        json.dump(result, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(result["stdout"])
        sys.stdout.flush()
        sys.stderr.write(result["stderr"])  # its warnings, as Python would show them
        _report_recording_stopped(result["limits"])
    if outcome["status"] == "ok":
        return 0
    if args.command == "run":
        _report_failure(outcome)
    return 1


def version() -> str:
    """This installation's version, and the PyTorch version its engine follows."""
    from importlib import metadata

    import engine  # only here: the commands that only talk to the sandbox never load it

    return f"gradtrace {metadata.version('gradtrace')} (engine {engine.__version__})"


class _PrintVersion(argparse.Action):
    """--version, which works out the version only when asked (argparse's own `version`
    action wants the text up front, which would load the engine for every command)."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(version())
        parser.exit()


def _export(args: argparse.Namespace) -> int:
    """Run the snippet in the sandbox, then draw its file here (this machine's own snippet)."""
    # the sandbox's zygote takes half a second to warm up in its own process: it starts first,
    # and meanwhile this one imports the drawing code
    settings = Settings.from_environment()
    starting = threading.Thread(target=execution.sandbox, args=(settings.sandbox,), daemon=True)
    starting.start()
    from tqdm import tqdm

    from app.export.make import export
    from app.export.options import BadOption, ExportRequest
    from app.export.raster import ExportUnavailable
    from app.render import layout  # noqa: F401  (Graphviz, loaded while the zygote warms)
    from app.store import trace_id

    starting.join()
    try:
        code = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        print(f"gradtrace: cannot read {args.file}: {error}", file=sys.stderr)
        return 2
    output = args.output or args.file.with_suffix(f".{args.format}")
    _warn_if_weak()
    trace = execution.run_snippet(code)
    wanted = ExportRequest.checked(args.format, args.view, args.theme, args.first, args.last)
    failed = None
    with tqdm(desc=f"drawing {output.name}", unit="step", disable=_quiet(args.progress)) as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        try:
            data = export(trace, trace_id(code), wanted, progress=progress)
        except (BadOption, ExportUnavailable) as problem:
            failed = str(problem), 2
        # any other failure is this command's, and says what failed, not where (a traceback)
        except Exception as error:
            failed = f"could not draw {output.name}: {_one_line(error)}", 1
    if failed is None:
        try:
            output.write_bytes(data)
        except OSError as error:
            failed = f"cannot write {output}: {_one_line(error)}", 1
    if failed is not None:  # after the progress bar has closed its line
        print(f"gradtrace: {failed[0]}", file=sys.stderr)
        return failed[1]
    outcome = trace["outcome"]
    ending = "" if outcome["status"] == "ok" else f" (the run ended: {outcome['status']})"
    print(f"{output}: {len(data):,} bytes{ending}", file=sys.stderr)
    return 0


def _store(args: argparse.Namespace) -> int:
    """Copy a store into another, or check one; neither evicts anything from either."""
    from app.store.copy import check_store, copy_store

    if args.store_command == "copy":
        if args.source == args.target:
            print("gradtrace: SRC and DST are the same store", file=sys.stderr)
            return 2
        source = _open_store(args.source, must_exist=True)
        target = None if source is None else _open_store(args.target)
        if target is None:
            return 2
        copied = copy_store(source, target)
        print(
            f"{copied.added:,} traces copied, {copied.kept:,} there already"
            + (f", {copied.conflicting:,} left out: their code is there under another id"
               if copied.conflicting else "")
        )  # fmt: skip
        return 0
    if args.location is None:
        settings = Settings.from_environment()
        args.location = settings.store.database_url or str(settings.db_path)
    store = _open_store(args.location, must_exist=True)
    if store is None:
        return 2
    checked, problems = check_store(store)
    for problem in problems:
        print(f"{problem.ident}: {problem.message}")
    print(f"{checked:,} traces checked, {len(problems):,} bad")
    return 1 if problems else 0


def _open_store(location: str, must_exist: bool = False):
    """The store at `location`, opened without eviction, or None (having said why)."""
    from app.store import is_url, open_store

    if must_exist and not is_url(location) and not pathlib.Path(location).is_file():
        print(f"gradtrace: no store at {location}", file=sys.stderr)
        return None
    try:
        return open_store(location if is_url(location) else pathlib.Path(location), sweep=False)
    except Exception as error:  # a wrong URL, a refused connection, a file that is not SQLite
        print(f"gradtrace: cannot open {location}: {_one_line(error)}", file=sys.stderr)
        return None


def _one_line(error: Exception) -> str:
    """`Type: message` on one line, as the end of a traceback says it."""
    message = " ".join(str(error).split())
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _quiet(progress: bool | None) -> bool | None:
    """tqdm's `disable`: None leaves it to tqdm (no bar unless stderr is a terminal)."""
    return None if progress is None else not progress


def _check_lessons(paths: list[pathlib.Path]) -> int:
    """Each lesson's problems as `file:line: message`; 0 when there are none."""
    from app.lessons.check import check_file

    files = []
    for path in paths:
        files += sorted(path.glob("*.md")) if path.is_dir() else [path]
    if not files:
        print("gradtrace: no lesson files found", file=sys.stderr)
        return 2
    _warn_if_weak()
    failed = 0
    for path in files:
        report = check_file(path, execution.run_snippet)
        for line in report.lines():
            print(line)
        if report.problems:
            failed += 1
        else:
            print(f"{path}: ok ({report.steps} steps)")
    if failed:
        print(f"{failed} of {len(files)} lessons have problems")
    return 1 if failed else 0


def _warn_if_weak() -> None:
    """Local use works without every layer (macOS, old kernels), but says so."""
    missing = execution.missing_layers()
    if missing:
        print(
            f"gradtrace: warning: the sandbox here lacks {', '.join(missing)}; "
            "run only snippets you trust",
            file=sys.stderr,
        )


def _serve(host: str, port: int, allow_weak: bool) -> int:
    import uvicorn

    from app import logs
    from app.http_server import server_config
    from app.main import create_app

    logs.configure(logging.INFO)  # one JSON object per line (app/logs.py)
    settings = Settings.from_environment()
    execution.sandbox(settings.sandbox)
    report = execution.layer_report()
    # behind a reverse proxy (docs/deploying.md) a loopback address serves the world too
    public = not _loopback(host) or bool(settings.trusted_proxies)
    if public and not report["strong"]:
        weak = [
            n
            for n, layer in report["layers"].items()
            if layer["state"] not in ("active", "not-needed")
        ]
        if not allow_weak:
            print(
                f"gradtrace: refusing to serve {host}: sandbox layers missing or failing here: "
                f"{', '.join(weak)}. Serve 127.0.0.1, or pass --allow-weak-sandbox to accept "
                "running anyone's code without them.",
                file=sys.stderr,
            )
            return 2
        for _ in range(3):
            logging.getLogger("gradtrace").error(
                "SERVING %s WITH A WEAK SANDBOX (%s): anyone who can reach it can run code "
                "with fewer walls around it",
                host,
                ", ".join(weak),
            )
    app = create_app(settings, require_strong_sandbox=public and not allow_weak)
    uvicorn.Server(server_config(app, settings, host=host, port=port)).run()
    return 0


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may resolve anywhere


def _report_recording_stopped(limits: dict) -> None:
    """Say on stderr that the trace is partial, though the output above is whole."""
    line = limits.get("stopped_line")
    if line is not None:
        print(
            f"gradtrace: recording stopped at line {line} after {limits['max_events']:,} "
            "events; the snippet ran on to its end unrecorded",
            file=sys.stderr,
        )


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
