"""Export options checked before anything is drawn, the export routes' answers (statuses, media
types, file names, revalidation, the thumbnail's size), and a standalone file that holds
hostile names and printed text without ever running them."""

from __future__ import annotations

import io
import re
import sqlite3
import xml.etree.ElementTree as ET
import zipfile
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient
from PIL import Image
from pypdf import PdfReader

from app.config import Settings, StoreSettings
from app.examples import DEFAULT
from app.export import raster
from app.export.make import export
from app.export.options import FORMATS, MAX_FRAMES, BadOption, ExportRequest
from app.main import create_app
from app.store import trace_id
from engine.tracer import trace_snippet

# ***** the options *****


def test_a_request_left_alone_is_the_whole_trace_in_the_tensors_view_light():
    wanted = ExportRequest.checked("gif")
    assert (wanted.view, wanted.theme, wanted.first, wanted.last) == (
        "tensors",
        "light",
        None,
        None,
    )
    steps = wanted.steps(11)
    assert (steps.first, steps.last, len(steps), list(steps.indices)) == (
        1,
        11,
        11,
        list(range(11)),
    )
    assert wanted.filename("abc") == "gradtrace-abc.gif"
    ranged = ExportRequest.checked("pdf", "autograd", "dark", 3, None)
    assert ranged.steps(11).indices == range(2, 11)
    assert ranged.filename("abc") == "gradtrace-abc-steps-3-end.pdf"


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"format": "docx"}, "No export is called 'docx': use one of html, zip, pdf, gif."),
        ({"format": "gif", "view": "sideways"}, "view='sideways' is not known: use one of"),
        ({"format": "gif", "theme": "neon"}, "theme='neon' is not known: use one of light, dark"),
    ],
)
def test_a_bad_format_view_or_theme_says_what_to_give(options, says):
    with pytest.raises(BadOption) as raised:
        ExportRequest.checked(**options)
    assert str(raised.value).startswith(says)


@pytest.mark.parametrize(
    ("first", "last", "says"),
    [
        (0, None, "from=0: this trace has steps 1 to 11."),
        (12, None, "from=12: this trace has steps 1 to 11."),
        (None, 12, "to=12: this trace has steps 1 to 11."),
        (5, 2, "from=5 is after to=2: give a range that goes forwards."),
    ],
)
def test_a_range_outside_the_trace_says_which_steps_it_has(first, last, says):
    wanted = ExportRequest.checked("zip", first=first, last=last)  # checked against no trace yet
    with pytest.raises(BadOption, match=f"^{says}$"):
        wanted.steps(11)


def test_an_image_export_draws_at_most_max_frames_but_a_file_plays_any_number():
    total = MAX_FRAMES + 10
    for format in ("zip", "pdf", "gif"):
        with pytest.raises(BadOption, match=f"at most {MAX_FRAMES} at a time"):
            ExportRequest.checked(format).steps(total)
        assert len(ExportRequest.checked(format, first=11).steps(total)) == MAX_FRAMES
    assert len(ExportRequest.checked("html").steps(total)) == total


# ***** the routes *****


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return create_app(
        Settings(store=StoreSettings(path=tmp_path_factory.mktemp("db") / "traces.db"))
    )


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app, base_url="http://localhost") as client:
        yield client


@pytest.fixture(scope="module")
def stored(client):
    """The default example stored: its id and its number of steps (from the page's step list)."""
    ident = client.post("/api/traces", json={"code": DEFAULT.code}).json()["id"]
    total = client.get(f"/t/{ident}").text.count("<li data-phase=")
    assert total > 5
    return ident, total


MAGIC = {"html": b"<!doctype html>", "zip": b"PK\x03\x04", "pdf": b"%PDF-", "gif": b"GIF89a"}


@pytest.mark.parametrize("format", list(FORMATS))
def test_each_export_is_an_attachment_of_its_type_and_revalidates(client, stored, format):
    ident, _ = stored
    answer = client.get(f"/t/{ident}/export.{format}")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == FORMATS[format][0]
    assert answer.headers["content-disposition"] == (
        f'attachment; filename="gradtrace-{ident}.{format}"'
    )
    assert answer.content.startswith(MAGIC[format])
    tag = answer.headers["etag"]
    again = client.get(f"/t/{ident}/export.{format}", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == tag
    # another range is another file, with another tag
    ranged = client.get(f"/t/{ident}/export.{format}?from=2&to=3", headers={"If-None-Match": tag})
    assert ranged.status_code == 200 and ranged.headers["etag"] != tag
    assert (
        f'filename="gradtrace-{ident}-steps-2-3.{format}"' in ranged.headers["content-disposition"]
    )


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("view=sideways", "view='sideways' is not known"),
        ("theme=neon", "theme='neon' is not known"),
        ("from=two", "from='two' is not a step number: give a whole number from 1."),
        ("to=-3", "to='-3' is not a step number"),
        ("from=9999999999", "is not a step number"),
        ("from=0", "from=0: this trace has steps 1 to {total}."),
        ("to=999", "to=999: this trace has steps 1 to {total}."),
        ("from=4&to=2", "from=4 is after to=2: give a range that goes forwards."),
    ],
)
@pytest.mark.parametrize("format", ["html", "gif"])
def test_a_bad_option_is_a_422_saying_what_to_give(client, stored, format, query, says):
    ident, total = stored
    answer = client.get(f"/t/{ident}/export.{format}?{query}")
    assert answer.status_code == 422
    assert answer.headers["content-type"].startswith("text/plain")
    assert says.format(total=total) in answer.text


def test_an_unknown_trace_or_format_is_a_404(client, stored):
    ident, _ = stored
    for path in ("/t/nosuchtrace/export.html", "/t/nosuchtrace.png", "/t/nosuchtrace.svg"):
        answer = client.get(path)
        assert answer.status_code == 404 and "No trace is stored as 'nosuchtrace'" in answer.text
    unknown = client.get(f"/t/{ident}/export.docx")
    assert unknown.status_code == 404 and "No export is called 'docx'" in unknown.text
    assert client.get(f"/t/{ident}.jpg").status_code == 404


def test_the_thumbnail_is_exactly_the_size_oembed_promises(client, stored):
    ident, total = stored
    answer = client.get(f"/t/{ident}.png")
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/png"
    image = Image.open(io.BytesIO(answer.content))
    assert image.size == raster.THUMBNAIL_SIZE
    again = client.get(f"/t/{ident}.png", headers={"If-None-Match": answer.headers["etag"]})
    assert again.status_code == 304
    one = client.get(f"/t/{ident}.svg?step=2&view=autograd&theme=dark")
    assert one.status_code == 200 and one.headers["content-type"].startswith("image/svg+xml")
    assert f"Step 2 of {total}" in one.text
    assert client.get(f"/t/{ident}.png?step={total + 1}").status_code == 422
    assert client.get(f"/t/{ident}.png?view=sideways").status_code == 422


def test_an_export_that_would_cost_too_much_is_a_422_saying_how_many_steps_to_ask(client):
    """Checked in the worker before any frame is drawn (app/export/cost.py): 240 steps of a
    drawing of up to 189 elements a step."""
    code = (
        "import torch\n"
        "ws = [torch.tensor(float(i), requires_grad=True) for i in range(15)]\n"
        "for step in range(5):\n"
        "    total = ws[0] * 0.5\n"
        "    for w in ws[1:]:\n"
        "        total = total + w * w\n"
        "    total.backward()\n"
    )
    ident = client.post("/api/traces", json={"code": code}).json()["id"]
    answer = client.get(f"/t/{ident}/export.gif?from=1&to={MAX_FRAMES}")
    assert answer.status_code == 422
    assert re.search(r"ask for at most \d+ steps \(from= and to=\)", answer.text), answer.text


# ***** hostile names *****

HOSTILE = """import torch
a = torch.tensor(2.0, requires_grad=True)
globals()['<img src=x onerror=alert(1)>'] = a * 3
b = globals()['<img src=x onerror=alert(1)>'] + 1
b.backward()
print("</script><script>alert(1)</script>")
print("</style><style>body{display:none}</style>")
"""


class Elements(HTMLParser):
    """Every start tag of a document, with its attributes, as a browser's tokenizer reads it."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_hostile_names_and_output_are_text_in_the_standalone_file():
    trace = trace_snippet(HOSTILE)
    labels = {tensor["label"] for tensor in trace["tensors"].values()}
    assert "<img src=x onerror=alert(1)>" in labels, "the tracer names the tensor (the threat)"
    page = export(trace, "hostile", ExportRequest.checked("html")).decode()
    parser = Elements()
    parser.feed(page)
    scripts = [attrs for tag, attrs in parser.tags if tag == "script"]
    assert len(scripts) == 2
    assert scripts[0] == {"type": "application/json", "data-player-data": None}
    assert scripts[1] == {"type": "module"}
    assert [tag for tag, _ in parser.tags].count("style") == 1
    assert not any(tag == "img" for tag, _ in parser.tags)
    handlers = [
        (tag, name) for tag, attrs in parser.tags for name in attrs if name.startswith("on")
    ]
    assert handlers == []
    # what was printed is on the page, as text
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_trace_recorded_by_an_older_engine_moves_to_todays_run_keeping_the_query(app, client):
    """As the trace page does: the code runs again, and the export is answered from its new id."""
    code = "import torch\nx = torch.tensor(2.0, requires_grad=True)\n(x * x).backward()\n"
    today = client.post("/api/traces", json={"code": code}).json()["id"]
    older = trace_id(code, "2.13.0+gradtrace.0")
    with sqlite3.connect(app.state.settings.db_path) as db:  # as an older server stored it
        db.execute(
            "UPDATE traces SET id = ?, hash = ?, engine = ? WHERE id = ?",
            (older, older, "old", today),
        )
    for path in (f"/t/{older}/export.gif?from=1&to=2", f"/t/{older}.png?step=2"):
        answer = client.get(path, follow_redirects=False)
        assert answer.status_code == 307
        assert answer.headers["location"].endswith(path.replace(older, today))
        assert client.get(answer.headers["location"]).status_code == 200


@pytest.mark.parametrize(
    "reply", [None, [], {}, {"data": 5}, {"data": "not base64!"}, {"bad_option": ["x"]}]
)
def test_a_render_workers_junk_reply_is_a_failure_to_draw_never_a_500(app, client, stored, reply):
    ident, _ = stored
    pool = app.state.traces.pool
    original = pool.export

    async def junk(*_args):
        return reply

    pool.export = junk
    try:
        answer = client.get(f"/t/{ident}/export.pdf?from=2&to=3&theme=dark")
    finally:
        pool.export = original
    assert answer.status_code == 422
    assert "could not be drawn" in answer.text


# ***** controls in what a snippet names, prints and raises *****

CONTROLS = """import torch
a = torch.tensor(2.0, requires_grad=True)
globals()["x\\x1by\\x00"] = a * 3
print("\\x1b[31mred\\x07 nul\\x00 bom\\ufeff")
b = globals()["x\\x1by\\x00"] + 1
b.backward()
raise ValueError("bell\\x07")
"""
# what XML 1.0 forbids, and the invisible characters drawn as escapes with them
UNSEEN = [chr(c) for c in (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, 0xFEFF)]
SHOWN = ["\\x1b[31mred\\x07", "nul\\x00", "bom\\ufeff", "x\\x1by\\x00", "bell\\x07"]


@pytest.fixture(scope="module")
def controls(client):
    """A run that printed, named and raised controls: its id and its number of steps."""
    answer = client.post("/api/traces", json={"code": CONTROLS})
    ident = answer.json()["id"]
    return ident, client.get(f"/t/{ident}").text.count("<li data-phase=")


def _shown_visibly(text: str) -> None:
    assert not [c for c in UNSEEN if c in text]
    for escape in SHOWN:
        assert escape in text


@pytest.mark.parametrize("format", list(FORMATS))
def test_an_export_of_a_run_that_printed_controls_shows_them_as_escapes(client, controls, format):
    ident, total = controls
    answer = client.get(f"/t/{ident}/export.{format}")
    assert answer.status_code == 200, answer.text
    data = answer.content
    if format == "html":
        page = data.decode()
        assert not [c for c in UNSEEN if c in page]
        assert "\\x1b[31mred\\x07 nul\\x00 bom\\ufeff" in page  # the printed output
    elif format == "zip":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            svgs = [archive.read(n).decode() for n in archive.namelist() if n.endswith(".svg")]
        assert len(svgs) == total
        for svg in svgs:
            ET.fromstring(svg)
        _shown_visibly("".join(svgs))
    elif format == "pdf":
        pages = PdfReader(io.BytesIO(data)).pages
        assert len(pages) == total
        text = "".join(page.extract_text() for page in pages)
        assert "\\x1b[31mred\\x07" in text and "bell\\x07" in text
    else:
        assert Image.open(io.BytesIO(data)).n_frames == total


def test_a_picture_of_a_run_that_printed_controls_shows_them_as_escapes(client, controls):
    ident, total = controls
    picture = client.get(f"/t/{ident}.png")
    assert picture.status_code == 200, picture.text
    assert picture.content.startswith(b"\x89PNG")
    svgs = [client.get(f"/t/{ident}.svg?step={k}").text for k in range(1, total + 1)]
    for svg in svgs:
        ET.fromstring(svg)
    _shown_visibly("".join(svgs))
