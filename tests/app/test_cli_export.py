"""`gradtrace export FILE --format html|pdf|gif|zip -o OUT`, through `app.cli.main` with the
real sandbox: each format's file (its magic bytes, its frames or pages), a range, the progress
bar, and the clear failures (a bad range, an unreadable file) with exit status 2."""

from __future__ import annotations

import io
import zipfile

import pytest
from PIL import Image
from pypdf import PdfReader

from app.cli import main
from app.examples import DEFAULT
from app.render import render
from engine.tracer import trace_snippet


@pytest.fixture(scope="module")
def total():
    """The seed's number of steps, counted in-process (no sandbox needed to count)."""
    return len(render(trace_snippet(DEFAULT.code))["steps"])


@pytest.fixture
def seed(tmp_path):
    path = tmp_path / "seed.py"
    path.write_text(DEFAULT.code)
    return path


def export(*args) -> int:
    return main(["export", *map(str, args)])


def test_html_is_one_file_that_plays(seed, capsys):
    assert export(seed, "--format", "html") == 0  # no -o: the snippet's name, .html
    out = seed.with_suffix(".html")
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>")
    assert "<grad-player" in page and '<script type="module">' in page
    assert f"{out}: {out.stat().st_size:,} bytes" in capsys.readouterr().err


def test_a_pdf_of_a_range_has_a_page_per_step_of_it(seed, tmp_path, capsys):
    out = tmp_path / "handout.pdf"
    assert export(seed, "--format", "pdf", "--from", 2, "--to", 4, "-o", out) == 0
    data = out.read_bytes()
    assert data.startswith(b"%PDF-")
    pages = PdfReader(io.BytesIO(data)).pages
    assert len(pages) == 3
    assert "Step 2 of" in pages[0].extract_text() and "Step 4 of" in pages[2].extract_text()


def test_a_gif_has_a_frame_per_step(seed, tmp_path, total):
    out = tmp_path / "slide.gif"
    assert export(seed, "--format", "gif", "--view", "autograd", "-o", out) == 0
    image = Image.open(out)
    assert image.format == "GIF" and image.n_frames == total


def test_a_zip_shows_its_progress_and_holds_each_step(seed, tmp_path, total, capsys):
    out = tmp_path / "frames.zip"
    assert export(seed, "--format", "zip", "--progress", "-o", out) == 0
    err = capsys.readouterr().err
    assert f"{total}/{total}" in err and "drawing frames.zip" in err
    with zipfile.ZipFile(out) as archive:
        names = archive.namelist()
        for k in range(1, total + 1):
            assert archive.read(f"step-{k:03d}.png").startswith(b"\x89PNG\r\n\x1a\n")
            assert archive.read(f"step-{k:03d}.svg").lstrip().startswith(b"<svg")
        assert len(names) == 2 * total + 1  # and steps.txt
        assert archive.read("steps.txt").decode().count("\n") == total


def test_a_bad_range_exits_2_saying_what_to_give(seed, tmp_path, capsys):
    out = tmp_path / "never.html"
    assert export(seed, "--format", "html", "--from", 5, "--to", 2, "-o", out) == 2
    err = capsys.readouterr().err
    assert "gradtrace: from=5 is after to=2: give a range that goes forwards." in err
    assert not out.exists()


def test_an_unreadable_file_exits_2(tmp_path, capsys):
    missing = tmp_path / "missing.py"
    assert export(missing, "--format", "gif", "-o", tmp_path / "x.gif") == 2
    assert f"gradtrace: cannot read {missing}" in capsys.readouterr().err
    undecodable = tmp_path / "latin1.py"
    undecodable.write_bytes(b"print('caf\xe9')\n")
    assert export(undecodable, "--format", "gif", "-o", tmp_path / "x.gif") == 2
    assert "cannot read" in capsys.readouterr().err
    assert not (tmp_path / "x.gif").exists()


CONTROLS = """import torch
a = torch.tensor(2.0, requires_grad=True)
globals()["x\\x1by"] = a * 3
print("\\x1b[31mred\\x07 nul\\x00")
globals()["x\\x1by"].backward()
"""


@pytest.mark.parametrize("format", ["html", "zip", "pdf", "gif"])
def test_a_snippet_that_printed_controls_exports_them_written_out(tmp_path, format):
    """ESC, BEL and NUL have no place in XML: drawn as `\\x1b`, the export is written."""
    snippet = tmp_path / "controls.py"
    snippet.write_text(CONTROLS)
    out = tmp_path / f"controls.{format}"
    assert export(snippet, "--format", format, "-o", out) == 0
    data = out.read_bytes()
    if format == "html":
        text = data.decode()
    elif format == "zip":
        with zipfile.ZipFile(out) as archive:
            text = "".join(archive.read(n).decode() for n in archive.namelist() if n[-4:] == ".svg")
    elif format == "pdf":
        text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)
    else:
        assert Image.open(out).n_frames == len(render(trace_snippet(CONTROLS))["steps"])
        return
    assert "\\x1b[31mred\\x07 nul\\x00" in text
    assert not {"\x1b", "\x07", "\x00"} & set(text)


def test_a_failure_to_draw_is_one_line_saying_what_failed(seed, tmp_path, capsys, monkeypatch):
    def failing(*args, **kwargs):
        raise RuntimeError("the drawing\nfell over")

    monkeypatch.setattr("app.export.make.export", failing)
    out = tmp_path / "never.pdf"
    assert export(seed, "--format", "pdf", "-o", out) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    said = [line for line in err.splitlines() if line.startswith("gradtrace: could not")]
    assert said == ["gradtrace: could not draw never.pdf: RuntimeError: the drawing fell over"]
    assert not out.exists()


def test_a_file_that_cannot_be_written_is_one_line_saying_why(seed, tmp_path, capsys):
    out = tmp_path / "no-such-folder" / "seed.html"
    assert export(seed, "--format", "html", "-o", out) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"gradtrace: cannot write {out}: FileNotFoundError: " in err
