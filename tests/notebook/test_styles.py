"""gradtrace/styles.py: a stylesheet confined to the notebook widget, on small sheets whose
every rule is known (the site's own are checked whole in test_notebook.py)."""

from __future__ import annotations

import pytest

from gradtrace.styles import UnscopableRule, scoped


def _lines(css: str) -> list[str]:
    return [line.strip() for line in css.splitlines()]


def test_selectors_are_prefixed_and_the_page_becomes_the_wrapper():
    css = scoped(":root { --ink: #111; } body { font: 16px serif; } a, b:is(i, u) > s { x: 1; }")
    assert _lines(css) == [
        ".gradtrace-widget {--ink: #111;}",
        ".gradtrace-widget {font: 16px serif;}",
        ".gradtrace-widget a, .gradtrace-widget b:is(i, u) > s {x: 1;}",
    ]


def test_the_dark_scheme_is_the_wrapper_s_dark_theme():
    css = scoped(
        "@media (prefers-color-scheme: dark) { :root { --ink: #eee; } .a { x: 1; } }\n"
        "@media screen and (prefers-color-scheme: dark) { .b { x: 2; } }\n"
        "@media print { .c { x: 3; } }"
    )
    assert _lines(css) == [
        ".gradtrace-widget:where(.theme-dark) {--ink: #eee;}",
        ".gradtrace-widget:where(.theme-dark) .a {x: 1;}",
        "@media screen {",
        ".gradtrace-widget:where(.theme-dark) .b {x: 2;}",
        "}",
        "@media print {",
        ".gradtrace-widget .c {x: 3;}",
        "}",
    ]


def test_keyframes_are_renamed_with_what_uses_them():
    css = scoped(
        "@keyframes spin { to { rotate: 1turn; } }\n"
        ".a { animation: spin 1s; display: spin; } .b { animation-name: spin; }"
    )
    assert _lines(css) == [
        "@keyframes gradtrace-spin { to { rotate: 1turn; } }",
        ".gradtrace-widget .a {animation: gradtrace-spin 1s; display: spin;}",
        ".gradtrace-widget .b {animation-name: gradtrace-spin;}",
    ]


def test_only_picks_rules_and_page_boxes_are_left_out():
    css = scoped(
        "@page { margin: 1cm; } :root { --a: 1; } .x { y: 2; } pre.out { z: 3 !important; }",
        only=(":root", "pre.out"),
    )
    assert _lines(css) == [
        ".gradtrace-widget {--a: 1;}",
        ".gradtrace-widget pre.out {z: 3 !important;}",
    ]


@pytest.mark.parametrize(
    "css",
    [
        '@import url("x.css");',
        "@font-face { font-family: x; }",
        "@media (prefers-color-scheme: light) { .a { x: 1; } }",
        "@media print, (prefers-color-scheme: dark) { .a { x: 1; } }",
    ],
)
def test_what_cannot_be_confined_is_refused(css):
    with pytest.raises(UnscopableRule):
        scoped(css)
