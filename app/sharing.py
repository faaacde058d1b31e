"""How a trace is shared: its addresses on this site, its title, and the markup another site
puts it in (an iframe, a reveal.js slide). One place, read by the Share dialog
(templates/_share.html), the oEmbed answer (app/routes/oembed.py) and the discovery links of a
trace's page, so the snippet copied from the page and the one a consumer fetches are the same.

Addresses are absolute, as the visitor reaches this site (app/public_url.py).
"""

from __future__ import annotations

import json
from urllib.parse import quote, urlencode

from markupsafe import escape
from starlette.requests import Request

from app.export.options import DRAWN_STEP_BY_STEP, MAX_FRAMES
from app.public_url import public_url

# the iframe's size when nobody asks for less (oEmbed's maxwidth/maxheight scale it down)
EMBED_SIZE = (800, 500)
TITLE_CHARS = 60
OEMBED_TYPE = "application/json+oembed"


def origin(request: Request) -> str:
    """`scheme://host[:port]` of this site, as the visitor reached it."""
    return public_url(request, "")


def title(code: str) -> str:
    """A short title for a trace: "gradtrace: " and its first line that says something (not
    blank, not an import; a comment without its #), cut to TITLE_CHARS."""
    words = ""
    for line in code.splitlines():
        line = line.strip().lstrip("#").strip()
        if line and not line.startswith(("import ", "from ")):
            words = line
            break
    words = words or "a trace"
    if len(words) > TITLE_CHARS:
        words = words[: TITLE_CHARS - 1].rstrip() + "…"
    # a lone surrogate (an old stored trace) would fail in a header or a UTF-8 body
    return "gradtrace: " + words.encode("utf-8", "backslashreplace").decode("utf-8")


def iframe(src: str, title: str, width: int, height: int, *, reveal: bool = False) -> str:
    """The iframe markup for an embed, every value attribute-escaped (the title is the
    trace's own words). reveal.js loads an iframe only when its slide is near (`data-src`)."""
    source = "data-src" if reveal else "src"
    lazy = "data-preload" if reveal else 'loading="lazy"'
    return (
        f'<iframe {source}="{escape(src)}" title="{escape(title)}" width="{width}" '
        f'height="{height}" {lazy} allow="fullscreen"></iframe>'
    )


def reveal_slide(src: str, title: str, width: int, height: int, start: int = 1) -> str:
    """A reveal.js slide holding the embed, opening at step `start`, with fragments that step
    it on (reveal_script drives it)."""
    frame = iframe(src, title, width, height, reveal=True)
    return (
        f'<section data-trace-start="{start}">\n  {frame}\n'
        '  <!-- each fragment shown is a step on; data-trace-step="N" on one goes to step N -->\n'
        '  <span class="fragment"></span>\n'
        '  <span class="fragment"></span>\n'
        "</section>"
    )


def reveal_script(site: str) -> str:
    """The deck's script that keeps each slide's embed at the step its fragments say, through
    the embed's postMessage API (docs/embedding.md): the last fragment shown's data-trace-step,
    else the slide's data-trace-start and one step per fragment shown.

    reveal.js moves a lazy frame's `data-src` to `src` as its slide comes near (and back as it
    goes far), so a slide's frame is found by either. A frame loaded late, or again, says it is
    ready: the slide that holds it (not necessarily the one shown: reveal.js preloads the next
    ones) catches up. Arriving on a slide syncs it too."""
    return f"""<script>
  // gradtrace: a slide's trace follows its fragments
  const GRADTRACE = {script_string(site)};
  const FRAMES = 'iframe[src^="' + GRADTRACE + '/"], iframe[data-src^="' + GRADTRACE + '/"]';
  function traceStep(slide) {{
    const shown = slide.querySelectorAll(".fragment.visible");
    const last = shown[shown.length - 1];
    if (last && last.dataset.traceStep) return Number(last.dataset.traceStep);
    return Number(slide.dataset.traceStart || 1) + shown.length;
  }}
  function syncTrace(slide) {{
    const frame = slide && slide.querySelector(FRAMES);
    if (frame && frame.contentWindow) {{
      frame.contentWindow.postMessage({{ gradtrace: "goto", step: traceStep(slide) }}, GRADTRACE);
    }}
  }}
  Reveal.on("fragmentshown", (event) => syncTrace(event.fragment.closest("section")));
  Reveal.on("fragmenthidden", (event) => syncTrace(event.fragment.closest("section")));
  Reveal.on("slidechanged", (event) => syncTrace(event.currentSlide));
  window.addEventListener("message", (event) => {{
    const said = event.origin === GRADTRACE && event.data && event.data.gradtrace;
    if (said !== "ready") return;
    for (const frame of document.querySelectorAll(FRAMES)) {{
      if (frame.contentWindow === event.source) syncTrace(frame.closest("section"));
    }}
  }});
</script>"""


def script_string(text: str) -> str:
    """`text` as a JavaScript string literal that cannot end its <script> element."""
    return json.dumps(text).replace("<", "\\u003c")


def oembed_url(site: str, page_url: str) -> str:
    """Where an oEmbed consumer asks about `page_url`."""
    return f"{site}/oembed?{urlencode({'url': page_url, 'format': 'json'})}"


def discovery_header(site: str, ident: str, title: str) -> str:
    """The HTTP Link header a trace's page answers with, naming its oEmbed address (the title
    percent-encoded, RFC 8187: a header carries only ASCII safely)."""
    target = oembed_url(site, f"{site}/t/{ident}")
    return (
        f'<{target}>; rel="alternate"; type="{OEMBED_TYPE}"; '
        f"title*=UTF-8''{quote(title, safe='')}"
    )


def dialog(request: Request, ident: str, code: str) -> dict:
    """What the Share dialog and the page's discovery link show for a trace."""
    site = origin(request)
    name = title(code)
    embed = f"{site}/embed/{ident}"
    width, height = EMBED_SIZE
    return {
        "origin": site,
        "title": name,
        "page": f"{site}/t/{ident}",
        "embed": embed,
        "oembed": oembed_url(site, f"{site}/t/{ident}"),
        "max_frames": MAX_FRAMES,  # the most steps an image export draws
        "bounded": DRAWN_STEP_BY_STEP,  # the exports it bounds
        "iframe": iframe(embed, name, width, height),
        "reveal_slide": reveal_slide(embed, name, width, height),
        "reveal_script": reveal_script(site),
    }
