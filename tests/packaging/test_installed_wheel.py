"""The wheel, installed in a fresh virtualenv, serves and exports from any folder (issue 23).

The checkout is out of the picture: an sdist is built from it and the wheel from the sdist, as
PyPI and pipx have them (python -m build), and the wheel is installed into a virtualenv in
a temporary folder (its dependencies from the package index, through pip's own cache, at the
versions constraints.txt pins), and run from another folder with no PYTHONPATH. It must find
its templates, static files and lessons inside itself, keep its database and session key in
GRADTRACE_DATA_DIR, and write nothing into its own installation.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import httpx
import pytest

import engine
from tests.live_server import free_port, serving

ROOT = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT = 1800  # seconds: a cold cache downloads numpy, MKL and the rest
SNIPPET = """import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a * b + a
d.backward()
print(a.grad.item(), b.grad.item())
"""

# a name the player imports from a module of its own: a standalone HTML file holds the player's
# modules joined into its page (app/export/bundle.py), read from the installed static files
PLAYER_MODULE_NAME = re.search(
    r"^import \{ (\w+)", (ROOT / "static" / "player.js").read_text(), re.M
)[1]

# one worker builds and installs the wheel once for both tests (--dist loadgroup); pip's work is
# mostly waiting on the disk, so it shares the machine with the parallel part
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("installed-wheel")]


def _run(command: list, **options) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, **options)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "build", "--outdir", folder, ROOT])
    (built,) = folder.glob("gradtrace-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv, outside the checkout, with the wheel and its dependencies."""
    venv = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", venv])
    install = ["-m", "pip", "install", "-q", "-c", ROOT / "constraints.txt", wheel]
    _run([venv / "bin" / "python", *install], timeout=INSTALL_TIMEOUT)
    return venv


@pytest.fixture
def elsewhere(installed, tmp_path) -> tuple[Path, dict]:
    """A working folder that is not the checkout, and an environment with nothing of ours in
    it (no PYTHONPATH, no other GRADTRACE_ setting) but the data folder."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("PYTHON", "GRADTRACE_", "VIRTUAL_ENV"))
    }
    env["PATH"] = f"{installed / 'bin'}{os.pathsep}{env.get('PATH', os.defpath)}"
    env["GRADTRACE_DATA_DIR"] = str(tmp_path / "data")
    env["HOME"] = str(tmp_path / "home")  # a cache or config file of someone's lands here
    work = tmp_path / "work"
    work.mkdir()
    return work, env


def _files(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*") if not path.is_dir()}


def test_the_wheel_holds_the_shipped_files_once_and_nothing_else(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert len(names) == len(set(names))
    assert {name.split("/")[0] for name in names} == {
        "app", "engine", "gradtrace", f"{wheel.name.split('-py3')[0]}.dist-info"
    }  # fmt: skip
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".db", ".key"))]
    shipped = {name.removeprefix("app/shipped/") for name in names if "/shipped/" in name}
    checkout = {
        *(f"templates/{p.name}" for p in (ROOT / "templates").glob("*.html")),
        *(f"static/{p.name}" for p in (ROOT / "static").glob("*.js")),
        *(f"lessons/{p.name}" for p in (ROOT / "lessons").glob("*.md")),
        "trace.schema.json",
        "lesson.schema.json",
    }
    assert checkout <= shipped, checkout - shipped
    assert "gradtrace/widget.js" in names


def test_the_installed_wheel_serves_and_exports_from_another_folder(installed, elsewhere):
    work, env = elsewhere
    data = Path(env["GRADTRACE_DATA_DIR"])
    before = _files(installed)
    gradtrace = str(installed / "bin" / "gradtrace")

    where = _run([installed / "bin" / "python", "-c", "import app; print(app.__file__)"],
                 cwd=work, env=env).stdout  # fmt: skip
    assert Path(where.strip()).is_relative_to(installed)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    shown = _run([gradtrace, "--version"], cwd=work, env=env).stdout
    assert shown.split() == ["gradtrace", version, "(engine", f"{engine.__version__})"]

    port = free_port()
    command = [gradtrace, "serve", "--port", str(port)]
    with serving(command, port, cwd=work, env=env) as (_, url), httpx.Client(base_url=url) as web:
        health = web.get("/healthz").json()
        assert health["sandbox"]["strong"] is True, health["sandbox"]["layers"]
        posted = web.post("/api/traces", json={"code": SNIPPET}, timeout=60).json()
        assert posted["trace"]["stdout"] == "5.0 3.0\n"
        page = web.get(posted["url"], timeout=60)
        assert page.status_code == 200 and "/static/player.css" in page.text
        assert web.get("/static/player.css").status_code == 200
        slugs = re.findall(r'href="/lessons/([\w-]+)"', web.get("/lessons").text)
        assert slugs
        lesson = web.get(f"/lessons/{slugs[0]}", timeout=60)
        assert lesson.status_code == 200
        export = web.get(f"{posted['url']}/export.html", timeout=120)
        assert export.status_code == 200 and "<html" in export.text
        picture = web.get(f"{posted['url']}.svg", timeout=60)
        assert picture.status_code == 200 and "<svg" in picture.text

    (work / "snippet.py").write_text(SNIPPET)
    _run([gradtrace, "export", "snippet.py", "--format", "html"], cwd=work, env=env, timeout=300)
    exported = (work / "snippet.html").read_text()
    assert PLAYER_MODULE_NAME in exported and PLAYER_MODULE_NAME in export.text

    assert _files(installed) - before == set()
    assert {"gradtrace.db", "session.key"} <= _files(data)
    assert _files(work) == {"snippet.py", "snippet.html"}
