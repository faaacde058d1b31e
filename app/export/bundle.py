"""The player's ES modules as one script, for pages that cannot fetch them: a standalone HTML
file opened from `file://` (Chromium refuses module imports there) and a notebook widget
(anywidget hands the front end one module's text).

The site serves static/ as it is; only these two need it joined. The modules keep to a small
form that makes joining them exact without Node or a bundler at run time:

- imports are one line each, `import { a, b as c } from "./x.js";` or
  `import * as x from "./x.js";`, of sibling modules;
- exports are declarations, `export function f`, `export const C`, `export class K`.

Each module becomes a function scope that returns its exports, so their private names cannot
collide; a module is placed before the modules that import it. Anything else (a bare or remote
import, `export default`, `export { ... }`) is refused with `UnbundlableModule`, and
tests/app/export/test_bundle.py joins the player on every run, so a module that leaves the form
fails a test rather than an export.
"""

from __future__ import annotations

import re
from pathlib import Path

from app.files import STATIC

_IMPORT = re.compile(r'^import\s+(?P<what>[^"\';]+?)\s+from\s+"\./(?P<file>[\w-]+\.js)";\s*$', re.M)
_ANY_IMPORT = re.compile(r"^\s*import\b", re.M)
_EXPORT = re.compile(
    r"^export\s+(?:async\s+)?(?:function\*?|const|let|class)\s+(?P<name>[\w$]+)", re.M
)
_ANY_EXPORT = re.compile(r"^\s*export\b", re.M)
_NAMED = re.compile(r"^\{\s*(?P<names>[\w$\s,]*?)\s*,?\s*\}$")
_NAMESPACE = re.compile(r"^\*\s+as\s+(?P<name>[\w$]+)$")


class UnbundlableModule(ValueError):
    """A module outside the form this bundler joins exactly (see the module's docstring)."""


def bundle(entry: str, static: Path = STATIC) -> str:
    """`entry` (a file in `static`) and every module it imports, as one module's text."""
    order: list[str] = []
    _visit(entry, static, order, visiting=set())
    parts = [_scoped(name, (static / name).read_text(encoding="utf-8")) for name in order[:-1]]
    parts.append(_rewrite_imports(entry, (static / entry).read_text(encoding="utf-8")))
    return "\n".join(parts)


def styles(*names: str, static: Path = STATIC) -> str:
    """The stylesheets `names` (files in `static`), joined in order."""
    return "\n".join((static / name).read_text(encoding="utf-8") for name in names)


def _visit(name: str, static: Path, order: list[str], visiting: set[str]) -> None:
    if name in order:
        return
    if name in visiting:
        raise UnbundlableModule(f"{name} imports itself through a cycle")
    visiting.add(name)
    source = (static / name).read_text(encoding="utf-8")
    for match in _IMPORT.finditer(source):
        _visit(match["file"], static, order, visiting)
    visiting.discard(name)
    order.append(name)


def _scope_name(name: str) -> str:
    return "module_" + re.sub(r"\W", "_", name.removesuffix(".js"))


def _scoped(name: str, source: str) -> str:
    """A module as `const module_x = (() => { ...; return { exports }; })();`."""
    body = _rewrite_imports(name, source)
    exported = _EXPORT.findall(source)
    body = _EXPORT.sub(lambda m: m[0].removeprefix("export").lstrip(), body)
    if _ANY_EXPORT.search(body):
        raise UnbundlableModule(f"{name}: only `export function|const|let|class NAME` is joined")
    names = ", ".join(exported)
    return (
        f"// {name}\nconst {_scope_name(name)} = (() => {{\n{body}\nreturn {{ {names} }};\n}})();\n"
    )


def _rewrite_imports(name: str, source: str) -> str:
    """Each import line replaced by reading the names off the imported module's scope."""

    def binding(match: re.Match) -> str:
        module = _scope_name(match["file"])
        what = match["what"].strip()
        if namespace := _NAMESPACE.match(what):
            return f"const {namespace['name']} = {module};"
        if named := _NAMED.match(what):
            pairs = [part.split() for part in named["names"].split(",") if part.strip()]
            fields = [p[0] if len(p) == 1 else f"{p[0]}: {p[2]}" for p in pairs if _pair(p)]
            if len(fields) != len(pairs):
                raise UnbundlableModule(f"{name}: cannot read the import {match[0]!r}")
            return f"const {{ {', '.join(fields)} }} = {module};"
        raise UnbundlableModule(f"{name}: cannot read the import {match[0]!r}")

    rewritten = _IMPORT.sub(binding, source)
    if _ANY_IMPORT.search(rewritten):
        raise UnbundlableModule(f'{name}: only `import {{ ... }} from "./sibling.js";` is joined')
    return rewritten


def _pair(words: list[str]) -> bool:
    return len(words) == 1 or (len(words) == 3 and words[1] == "as")
