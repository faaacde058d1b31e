"""The settings object and the one table of them in docs/deploying.md say the same (issue 23).

Every setting is listed, under the variable that sets it, with its default; every variable the
docs name is one the server reads (or one the tests' and the Makefile's own); each variable
really reaches its field; and a variable an earlier release read under another name is refused
with its new name, never quietly ignored.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from app.config import ENV_PREFIX, RENAMED, Names, Networks, Settings, SettingsError

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "deploying.md"
GROUPS = ("sandbox", "render", "store", "limits")
# variables that are not the server's settings: the test suite's and the Makefile's
NOT_SETTINGS = {"GRADTRACE_CHROMIUM", "GRADTRACE_ALLOW_WEAK_SANDBOX"}


def settings_by_variable() -> dict[str, tuple[str, str, object]]:
    """{variable: (group or "", field, default)} for every setting of the object."""
    found = {}
    for name, info in Settings.model_fields.items():
        if name in GROUPS:
            group = info.annotation
            for field, default in _fields(group):
                found[f"{ENV_PREFIX}{name.upper()}_{field.upper()}"] = (name, field, default)
        else:
            found[ENV_PREFIX + name.upper()] = (
                "",
                name,
                info.get_default(call_default_factory=True),
            )
    return found


def _fields(group) -> list[tuple[str, object]]:
    if dataclasses.is_dataclass(group):
        return [(f.name, getattr(group(), f.name)) for f in dataclasses.fields(group)]
    assert issubclass(group, BaseModel)
    return [(name, info.get_default()) for name, info in group.model_fields.items()]


def guide_table() -> dict[str, str]:
    """{variable: its default cell} from the guide's "Every setting" table."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index("## Every setting") :]
    section = section[: section.index("\n## ", 1)]
    rows = re.findall(r"^\| `(GRADTRACE_[A-Z_]+)` \| ([^|]+) \|", section, re.M)
    assert len(rows) == len(dict(rows)), "a variable is listed twice"
    return {variable: cell.strip() for variable, cell in rows}


def test_the_guide_lists_every_setting_and_nothing_else():
    assert sorted(guide_table()) == sorted(settings_by_variable())


@pytest.mark.parametrize("variable", sorted(settings_by_variable()))
def test_the_guide_gives_each_settings_default(variable):
    cell = guide_table()[variable]
    default = settings_by_variable()[variable][2]
    written = re.fullmatch(r"`([^`]*)`", cell)
    if default in ("", None, ()):
        assert cell == "none" or written is None, cell  # "none", or words for a computed one
        return
    if written is None:  # said in words: only what depends on the machine or the install
        assert isinstance(default, Path) or variable.endswith(("_MAX_IN_FLIGHT", "_PYTHON")), cell
        return
    text = written.group(1)
    if isinstance(default, bool):
        assert text == str(default).lower()
    elif isinstance(default, int | float):
        assert float(text) == default
    elif isinstance(default, Names):
        assert Names(text) == default
    else:
        assert text == str(default)


def test_every_variable_the_docs_name_is_read_by_the_server():
    read = set(settings_by_variable())
    for page in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
        named = set(
            re.findall(r"GRADTRACE_[A-Z_]*[A-Z](?![A-Z_*])", page.read_text(encoding="utf-8"))
        )
        # a name the guide gives as an earlier release's is allowed there alone
        renamed = named & set(RENAMED) if page == GUIDE else set()
        unknown = named - read - NOT_SETTINGS - renamed
        assert not unknown, f"{page.name} names variables the server does not read: {unknown}"


def _another_value(default):
    if isinstance(default, bool):
        return str(not default).lower(), not default
    if isinstance(default, int):
        return str(default + 1), default + 1
    if isinstance(default, float):
        return str(default / 2), default / 2
    return None


@pytest.mark.parametrize("variable", sorted(settings_by_variable()))
def test_each_variable_reaches_its_setting(variable, monkeypatch):
    group, field, default = settings_by_variable()[variable]
    if variable == "GRADTRACE_RENDER_TEST_TASKS":
        pytest.skip("a test hook: set by the tests in the object, not the environment")
    changed = _another_value(default)
    if changed is None:  # text, paths and lists: one of each kind is enough
        changed = {
            "GRADTRACE_SESSION_SECRET": ("sekrit", "sekrit"),
            "GRADTRACE_ALLOWED_HOSTS": ("a.example, b", Names("a.example,b")),
            "GRADTRACE_TRUSTED_PROXIES": ("10.0.0.0/8", Networks("10.0.0.0/8")),
            "GRADTRACE_STORE_PATH": ("/srv/t.db", Path("/srv/t.db")),
            "GRADTRACE_STORE_DATABASE_URL": ("postgresql://h/db", "postgresql://h/db"),
        }.get(variable)
        if changed is None:
            pytest.skip("a path or a program: checked by the tests of what uses it")
    text, expected = changed
    monkeypatch.setenv(variable, text)
    settings = Settings.from_environment()
    read = getattr(getattr(settings, group), field) if group else getattr(settings, field)
    assert read == expected


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_a_variable_of_an_earlier_release_is_refused_with_its_new_name(old, monkeypatch):
    monkeypatch.setenv(old, "1")
    with pytest.raises(SettingsError, match=f"{old} is now called {RENAMED[old]}"):
        Settings.from_environment()
    assert RENAMED[old] in settings_by_variable()


def test_a_bad_value_names_its_variable(monkeypatch):
    monkeypatch.setenv("GRADTRACE_LIMITS_MAX_CONNECTIONS", "many")
    with pytest.raises(SettingsError, match="GRADTRACE_LIMITS_MAX_CONNECTIONS"):
        Settings.from_environment()
    monkeypatch.setenv("GRADTRACE_LIMITS_MAX_CONNECTIONS", "0")
    with pytest.raises(SettingsError, match="GRADTRACE_LIMITS_MAX_CONNECTIONS"):
        Settings.from_environment()
