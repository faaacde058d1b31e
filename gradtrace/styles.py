"""The site's stylesheets made safe to drop into someone else's page: a notebook injects a
widget's CSS into its own document, so every rule must reach only the widget.

`scoped(css)` rewrites a stylesheet (parsed by tinycss2, not by pattern) so that:

- every selector is prefixed with the widget's wrapper (`.player` becomes
  `.gradtrace-widget .player`), and the page's own `:root` and `body` become the wrapper
  itself, so the site's colour variables and font are set on the widget, not on the notebook;
- `@media (prefers-color-scheme: dark)` becomes the wrapper's `theme-dark` class: the reader
  picks the theme (`theme="dark"`), not the operating system (`screen and (...)` keeps its
  `@media screen`);
- `@page` is left out: the notebook's printed pages are its own;
- keyframes are renamed with a `gradtrace-` prefix (theirs are global), and so are the
  animations that use them.

The site's sheets stay the one place the player's look is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import tinycss2
from tinycss2.ast import AtRule, Declaration, IdentToken, LiteralToken, QualifiedRule

WRAPPER = ".gradtrace-widget"
# on the wrapper, for theme="dark"; in :where() so the dark rules weigh what they weighed inside
# their @media, and the sheet's own order still decides between rules
DARK = ":where(.theme-dark)"
_PAGE_ITSELF = {":root", "html", "body"}  # what the wrapper stands for inside the widget
_KEEP_AT_RULES = {"media", "container", "supports"}
_PAGE_ONLY = {"page"}
# the dark scheme's feature, with the `and` that joins it to the rest of a media query
_DARK_SCHEME = re.compile(
    r"(?:\band\s+)?\(\s*prefers-color-scheme\s*:\s*dark\s*\)(?:\s+and\b)?", re.I
)
_ANIMATION = {"animation", "animation-name"}


class UnscopableRule(ValueError):
    """A rule the widget cannot confine to itself (an @import, a @font-face, ...)."""


def scoped(css: str, only: Iterable[str] | None = None) -> str:
    """`css` confined to the widget's wrapper. With `only`, just the rules whose selector list
    is one of those (as written, say ":root" or "pre.stdout"): a page's sheet has far more than
    the widget needs."""
    rules = tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)
    renames = {
        _ident(rule.prelude): f"gradtrace-{_ident(rule.prelude)}" for rule in _keyframes(rules)
    }
    wanted = None if only is None else set(only)
    return "\n".join(_rules(rules, WRAPPER, wanted, renames))


def _keyframes(rules) -> list[AtRule]:
    """Every @keyframes rule, at the top or inside a conditional rule."""
    found = []
    for rule in rules:
        if isinstance(rule, AtRule) and rule.lower_at_keyword == "keyframes":
            found.append(rule)
        elif isinstance(rule, AtRule) and rule.content is not None:
            found.extend(_keyframes(_inner(rule)))
    return found


def _rules(rules, scope: str, wanted: set[str] | None, renames: dict[str, str]) -> list[str]:
    out = []
    for rule in rules:
        if isinstance(rule, QualifiedRule):
            selectors = _selectors(rule.prelude)
            if wanted is not None and ", ".join(selectors) not in wanted:
                continue
            prefixed = ", ".join(scope if s in _PAGE_ITSELF else f"{scope} {s}" for s in selectors)
            out.append(f"{prefixed} {{{_declarations(rule.content, renames)}}}")
        elif not isinstance(rule, AtRule):
            continue  # a parse error tinycss2 kept: the browser would drop it too
        elif rule.lower_at_keyword == "keyframes":
            if wanted is None:
                name = renames[_ident(rule.prelude)]
                out.append(f"@keyframes {name} {{{tinycss2.serialize(rule.content)}}}")
        elif rule.lower_at_keyword in _PAGE_ONLY:
            continue  # the printed page's box is the notebook's to set, not a widget's
        elif rule.lower_at_keyword in _KEEP_AT_RULES:
            condition, dark = _without_dark_scheme(rule)
            inner = _rules(_inner(rule), f"{scope}{DARK}" if dark else scope, wanted, renames)
            if inner and condition:
                out.append(f"@{rule.lower_at_keyword} {condition} {{\n" + "\n".join(inner) + "\n}")
            else:
                out.extend(inner)
        else:
            raise UnscopableRule(f"@{rule.lower_at_keyword} cannot be confined to the widget")
    return out


def _inner(rule: AtRule) -> list:
    return tinycss2.parse_rule_list(rule.content, skip_comments=True, skip_whitespace=True)


def _selectors(prelude) -> list[str]:
    """A selector list split at its own commas (those inside `:is(...)` are a function's)."""
    parts: list[list] = [[]]
    for token in prelude:
        if isinstance(token, LiteralToken) and token.value == ",":
            parts.append([])
        else:
            parts[-1].append(token)
    return [tinycss2.serialize(part).strip() for part in parts]


def _declarations(content, renames: dict[str, str]) -> str:
    """A rule's body, with the animations it names renamed as their keyframes were."""
    declarations = tinycss2.parse_blocks_contents(content, skip_comments=True, skip_whitespace=True)
    for declaration in declarations:
        if isinstance(declaration, Declaration) and declaration.lower_name in _ANIMATION:
            declaration.value = [_renamed(token, renames) for token in declaration.value]
    return " ".join(tinycss2.serialize([d]) for d in declarations if isinstance(d, Declaration))


def _renamed(token, renames: dict[str, str]):
    if isinstance(token, IdentToken) and token.value in renames:
        return IdentToken(token.source_line, token.source_column, renames[token.value])
    return token


def _without_dark_scheme(rule: AtRule) -> tuple[str, bool]:
    """A conditional rule's condition less its `(prefers-color-scheme: dark)`, and whether it
    had one: `screen and (prefers-color-scheme: dark)` is `("screen", True)`."""
    condition = " ".join(tinycss2.serialize(rule.prelude).split())
    if "prefers-color-scheme" not in condition:
        return condition, False
    rest = _DARK_SCHEME.sub(" ", condition).strip()
    if "prefers-color-scheme" in rest or "," in condition:
        raise UnscopableRule(f"@{rule.lower_at_keyword} {condition}: only the dark scheme, alone")
    return rest, True


def _ident(prelude) -> str:
    return tinycss2.serialize(prelude).strip()
