"""Where the app keeps what it writes (a data folder of the settings') and finds what it ships
(inside its package), wherever it was installed (issue 23)."""

import json
import os
import stat
from pathlib import Path

from fastapi.testclient import TestClient

from app import files
from app.config import Settings, StoreSettings
from app.main import create_app


def test_the_data_folder_holds_the_database_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADTRACE_DATA_DIR", str(tmp_path / "data"))
    settings = Settings.from_environment()
    assert settings.data_dir == tmp_path / "data"
    assert settings.db_path == tmp_path / "data" / "gradtrace.db"


def test_the_store_path_moves_only_the_database(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADTRACE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRADTRACE_STORE_PATH", str(tmp_path / "t.db"))
    settings = Settings.from_environment()
    assert settings.data_dir == tmp_path / "data"
    assert settings.db_path == tmp_path / "t.db"


def test_without_a_data_folder_set_it_is_the_users_own(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))  # where platformdirs looks
    monkeypatch.delenv("GRADTRACE_DATA_DIR")
    assert Settings.from_environment().data_dir == tmp_path / "share" / "gradtrace"


def test_the_tests_never_write_into_the_users_data_folder(tmp_path):
    # tests/conftest.py points GRADTRACE_DATA_DIR at a folder of this run's own
    chosen = Settings(store=StoreSettings(path=tmp_path / "t.db")).data_dir
    assert chosen == Path(os.environ["GRADTRACE_DATA_DIR"])
    assert chosen.name.startswith("gradtrace-data-")


def test_the_session_key_is_kept_in_the_data_folder_not_beside_the_database(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADTRACE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRADTRACE_STORE_PATH", str(tmp_path / "db" / "t.db"))
    with TestClient(create_app(Settings.from_environment()), base_url="http://localhost"):
        pass
    key = tmp_path / "data" / "session.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.read_text().strip()
    assert not (tmp_path / "db" / "session.key").exists()
    assert (tmp_path / "db" / "t.db").exists()


def test_the_shipped_files_are_found_inside_the_package():
    assert files.TEMPLATES.is_relative_to(files.APP)
    assert (files.TEMPLATES / "base.html").is_file()
    assert (files.STATIC / "player.js").is_file()
    assert sorted(files.LESSONS.glob("*.md"))
    for schema in (files.TRACE_SCHEMA, files.LESSON_SCHEMA):
        assert json.loads(schema.read_text())["$schema"]


def test_children_are_given_our_code_only_when_python_would_not_find_it(monkeypatch):
    # a checkout (or a worktree on PYTHONPATH): not in site-packages, so handed over
    assert files.code_folder_for_children() == str(files.APP.parent)
    # installed: site-packages, which a child of this Python has on its path already
    monkeypatch.setattr(files.site, "getsitepackages", lambda: [str(files.APP.parent)])
    assert files.code_folder_for_children() is None
