"""Everything the player page shows for one trace, as plain JSON-able data.

The server draws a page in a render worker (app/render_pool.py), outside its own address
space and under a time and memory budget, so this is a pure function of the trace: it returns
what the player template reads (each view drawn once, at the last step, so the page is right
without JavaScript; the steps, the inspector's facts and the source lines) and nothing that only
lives in the server.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache, partial

from jinja2.utils import htmlsafe_json_dumps

from app.render import Prepared, assemble, draw_view, layout, modules, no_gc, prepare, view_size
from app.render.forked import at_once
from app.render.inspector import facts
from app.render.playback import HANDOUT_PAPER, paper_windows, still_of
from app.render.steps import VIEWS


def player_context(
    trace: dict, ident: str, expand: Iterable[str] = (), *, concurrently: bool = False
) -> dict:
    """The player's context for the trace stored as `ident`, with the stacks in `expand` drawn
    member by member. The trace itself is not repeated in it: the caller has it.

    `concurrently`: a big view is drawn in a forked child while this process makes the rest
    (app/render/forked.py); for a render worker, which has one thread and a core to spare. The
    context is the same either way."""
    expand = sorted(set(expand))
    with no_gc():  # as `render`, which this is but for writing out the drawings
        prepared = prepare(trace, expand)
        forked = _forked_view(prepared) if concurrently else None
        jobs: dict = {name: partial(_page_view, prepared, name) for name in VIEWS}
        jobs["words"] = partial(_words, prepared)
        made = at_once(jobs, forked)
        if forked is not None:  # what the child laid out, for the next edit of the same graph
            for source, raw in made[forked]["layouts"]:
                layout.remember(source, raw)
        views = {name: made[name]["view"] for name in VIEWS}
        rendered = assemble(prepared, views)
    words = made["words"]
    drawn = {element for view in views.values() for element in view["ids"]}
    shown = ("nodes", "frames", "notice", "width", "height")
    code = trace["code"]
    return {
        "code": code,
        "ident": ident,
        # the raw drawings are not kept beside the page's: a cached page holds each view once
        "rendered": {**rendered, "views": {n: _page_facts(v) for n, v in views.items()}},
        "drawings": {name: made[name]["still"] for name in VIEWS},
        "player_data": {
            "steps": rendered["steps"],
            "views": {
                name: {**{key: view[key] for key in shown}, "paper": made[name]["paper"]}
                for name, view in views.items()
            },
            "inspect": {
                **{e: rows for e, rows in words["facts"].items() if e in drawn},
                **_box_facts(rendered),
            },
            "generations": rendered["generations"],
            "printed": words["printed"],
        },
        "steps_html": words["steps_html"],
        "lines": code.splitlines(),
        "module_links": module_links(rendered["modules"], expand),
    }


# nodes and edges: a view this big is worth a forked child's few milliseconds (a 20-pass
# MLP's tensors view has ~790, and Graphviz lays it out in ~200 ms; the seed snippet's, ~15)
FORK_FROM = 150


def _forked_view(prepared: Prepared) -> str | None:
    """The view to draw in a forked child: the biggest, if it is big enough to be worth it."""
    biggest = max(VIEWS, key=lambda name: view_size(prepared, name))
    return biggest if view_size(prepared, biggest) >= FORK_FROM else None


def _page_view(prepared: Prepared, name: str) -> dict:
    """A view as the page shows it: drawn, its still at the last step (right without
    JavaScript, made from the drawing's elements: the raw drawing is never written out), its
    handout's windows, and the layouts Graphviz made for it (for a forked child's parent)."""
    known = layout.layouts_known()
    view = draw_view(prepared, name, written=False)
    steps = prepared.steps
    last = max(len(steps) - 1, 0)
    return {
        "still": still_of(view.pop("tree"), steps, name, last, standalone=False),
        "paper": handout_windows({"steps": steps, "views": {name: view}}, name),
        "view": view,
        "layouts": layout.layouts_since(known),
    }


def _words(prepared: Prepared) -> dict:
    """What the page says that needs no drawing: the steps in words, the stdout printed by
    each step, and the inspector's facts of every element a view may draw (the page keeps
    those drawn)."""
    trace, steps = prepared.trace, prepared.steps
    drawable = [
        element
        for name in VIEWS
        for element in (*prepared.stacked[name].graph.elements, *prepared.stacked[name].graph.edges)
    ]
    return {
        "steps_html": steps_html(steps),
        "printed": printed_by_step(trace, steps),
        "facts": facts(trace, drawable, steps),
    }


# what a page shows of the trace itself besides its drawing: the templates read these (and only
# these) as `trace.*`, so a drawn page carries them and the server never parses a stored trace
SHOWN_TRACE_FIELDS = ("code", "outcome", "stdout", "stderr")


def drawn_page(
    trace: dict, ident: str, expand: Iterable[str] = (), *, concurrently: bool = False
) -> dict:
    """The page as the templates read it (templates/_player.html, _result.html): the player's
    data as finished JSON text and the drawings as SVG text, the few facts the page prints, and
    `openable`, the stacks and modules a link may open. Kept whole in the server's page cache:
    a few large strings, not tens of thousands of objects for its garbage collector to walk."""
    context = player_context(trace, ident, expand, concurrently=concurrently)
    rendered = context["rendered"]
    groups = rendered["groups"]
    return {
        "code": context["code"],
        "ident": ident,
        "lines": context["lines"],
        "module_links": context["module_links"],
        "drawings": context["drawings"],
        "player_json": player_json(context["player_data"]),
        "steps_html": context["steps_html"],
        "rendered": {
            "step_count": len(rendered["steps"]),
            "generations": rendered["generations"],
            "notices": rendered["notices"],
            "boxes": bool(rendered["boxes"]),
            "groups": {
                gid: {"view": g["view"], "size": len(g["members"]), "expanded": g["expanded"]}
                for gid, g in groups.items()
            },
        },
        # what a link may open from here: any module call of the trace, and this page's stacks
        "openable": sorted({*groups, *(call["module"] for call in trace.get("modules", []))}),
        "trace": shown_trace(trace),
    }


def shown_trace(trace: dict) -> dict:
    """The parts of a trace a page prints besides its drawing, and how many events it has (a
    snippet Python could not read has one at most: app/routes/pages.py)."""
    shown = {field: trace.get(field) for field in SHOWN_TRACE_FIELDS}
    return {**shown, "event_count": len(trace.get("events", ()))}


def player_json(player_data: dict) -> str:
    """Player data as the page's <script type="application/json"> holds it: as Jinja's
    `tojson` writes it (keys sorted; <, >, & and ' escaped, so no `</script>` can end it)."""
    return str(htmlsafe_json_dumps(player_data, sort_keys=True))


def steps_html(steps: list[dict]) -> str:
    """Every step in words, as the player's list of them (templates/_steps.html)."""
    return _steps_template().render(steps=steps)


@cache
def _steps_template():
    from app import templating  # the page's one piece of markup drawn with it

    return templating.environment().get_template("_steps.html")


def module_links(shown: dict[str, dict], expand: list[str]) -> list[dict]:
    """A link to open each module drawn as boxes, and to close each one opened: the page's
    other openings (stacks, other modules) kept, so each link changes one thing."""
    links = []
    for token, module in shown.items():
        name = module["name"] or module["type"]
        if module["opened"]:
            keep = [e for e in expand if e != token]
            text, about = f"Close {name}", f"draw each call of {name} as one box again"
        else:
            keep = [*expand, token]
            text, about = f"Open {name}", f"draw what each call of {name} ({module['type']}) did"
        links.append({"text": text, "about": about, "expand": ",".join(sorted(keep))})
    return links


def handout_windows(rendered: dict, view: str) -> dict[int, list[float]]:
    """What the printed handout pictures of each step where that is not its pass's frame (a
    window at 9 pt on what the step is about; static/handout.js): `playback.paper_window`,
    the exports' rule, for a picture's room on A4."""
    frames = rendered["views"][view]["frames"]
    windows = paper_windows(rendered, view, HANDOUT_PAPER)
    return {
        k: window
        for k, (step, window) in enumerate(zip(rendered["steps"], windows, strict=True))
        if not 0 < step["generation"] <= len(frames)
        or window != list(frames[step["generation"] - 1] or ())
    }


def _box_facts(rendered: dict) -> dict[str, list[list]]:
    """What the inspector says of a module box: what it stands for and how to open it."""
    return {
        bid: [
            ["module", modules.title(about)],
            ["drawn as", f"one box for one call: {about['operations']:,} {_inside(bid)}"],
            # (true wherever the player is: an embed or a standalone file has no such link)
            [
                "to see inside",
                f"Open {about['name'] or about['type']}, a link under the player on the trace's "
                "page",
            ],
        ]
        for bid, about in rendered["boxes"].items()
    }


def _inside(bid: str) -> str:
    return "grad_fn nodes inside" if bid.endswith("-fn") else "operations inside"


def printed_by_step(trace: dict, steps: list[dict]) -> list[int]:
    """How much of the trace's stdout had been printed by the end of each step, so that a page
    can show the output no further than the steps it shows. Counted in UTF-16 code units, as
    the browser slices text. What no print event covers (a run cut at the event cap prints on,
    unrecorded) belongs to the last step."""
    ends = []  # (seq of a print event, stdout printed once it ran)
    printed = 0
    for event in trace["events"]:
        if event["kind"] == "print":
            printed += _utf16_length(event["text"])
            ends.append((event["seq"], printed))
    counts, shown, i = [], 0, 0
    for step in steps:
        if step["seq"] is not None:
            while i < len(ends) and ends[i][0] <= step["seq"][1]:
                shown = ends[i][1]
                i += 1
        counts.append(shown)
    if counts:
        counts[-1] = _utf16_length(trace["stdout"])
    return counts


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _page_facts(view: dict) -> dict:
    """The view's facts without its drawing (the page holds it once, as `drawings`) or the
    node boxes and font size only pictures on paper need."""
    return {
        key: value
        for key, value in view.items()
        if key not in ("svg", "tree", "node_boxes", "smallest_font")
    }
