"""The player's modules join into one script, each in its own scope, each once, importers after
what they import; a module outside the form the joiner reads exactly is refused, by name.
(tests/browser/test_standalone.py runs the joined player in Chromium.)"""

from __future__ import annotations

import re

import pytest

from app.export.bundle import STATIC, UnbundlableModule, bundle


def test_the_player_joins_with_every_module_it_imports_once_and_in_order():
    joined = bundle("player.js")
    scopes = re.findall(r"^const (module_\w+) = \(\(\) => \{$", joined, re.M)
    assert len(scopes) == len(set(scopes))
    imported = set(
        re.findall(r'^import .* from "\./([\w-]+)\.js";$', (STATIC / "player.js").read_text(), re.M)
    )
    assert {f"module_{name.replace('-', '_')}" for name in imported} <= set(scopes)
    for scope in scopes:
        defined = joined.index(f"const {scope} = ")
        used = [m.start() for m in re.finditer(rf"= {scope};", joined)]
        assert used and all(at > defined for at in used)
    assert not re.search(r"^\s*(import|export)\b", joined, re.M)


def _static(tmp_path, **files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_names_and_renames_and_namespaces_are_read_off_the_scopes(tmp_path):
    static = _static(
        tmp_path,
        **{
            "a.js": "export const ONE = 1;\nexport function two() { return 2; }\n"
            "const hidden = 3;\n",
            "main.js": 'import { ONE, two as deux } from "./a.js";\nimport * as a from "./a.js";\n'
            "console.log(ONE, deux(), a.two());\n",
        },
    )
    joined = bundle("main.js", static)
    assert "const { ONE, two: deux } = module_a;" in joined
    assert "const a = module_a;" in joined
    assert "return { ONE, two };" in joined  # `hidden` stays private to its scope


@pytest.mark.parametrize(
    "source",
    [
        'import confetti from "https://cdn.example/confetti.js";\n',
        'import { x } from "lodash";\n',
        'import("./a.js");\n',
        'import { x } from "./a.js"; console.log(x);\n',
    ],
)
def test_an_import_outside_the_form_is_refused(tmp_path, source):
    static = _static(tmp_path, **{"a.js": "export const x = 1;\n", "main.js": source})
    with pytest.raises(UnbundlableModule, match="main.js"):
        bundle("main.js", static)


@pytest.mark.parametrize("source", ["export default 1;\n", "const x = 1;\nexport { x };\n"])
def test_an_export_outside_the_form_is_refused(tmp_path, source):
    static = _static(tmp_path, **{"a.js": source, "main.js": 'import * as a from "./a.js";\n'})
    with pytest.raises(UnbundlableModule, match="a.js"):
        bundle("main.js", static)


def test_an_import_cycle_is_refused(tmp_path):
    static = _static(
        tmp_path,
        **{
            "a.js": 'import { b } from "./b.js";\nexport const a = 1;\n',
            "b.js": 'import { a } from "./a.js";\nexport const b = 2;\n',
            "main.js": 'import { a } from "./a.js";\n',
        },
    )
    with pytest.raises(UnbundlableModule, match="cycle"):
        bundle("main.js", static)
