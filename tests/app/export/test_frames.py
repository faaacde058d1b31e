"""A frame is the player's step: the same elements shown, the same texts, the step's own
narration beneath, a 16:9 slide, and the pass its step belongs to, its labels at 9 pt or more."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.examples import BY_SLUG
from app.export.frames import SLIDE, THEMES, frames
from app.export.options import StepRange
from app.render import render
from app.render.layout import SVG
from app.render.playback import MIN_LABEL_PT, state_at
from engine.tracer import trace_snippet

NS = {"svg": SVG}


@pytest.fixture(scope="module")
def seed():
    return render(trace_snippet(BY_SLUG["two-paths"].code))


@pytest.fixture(scope="module")
def loop():
    return render(trace_snippet(BY_SLUG["accumulation"].code))


@pytest.fixture(scope="module")
def mlp():
    """Twenty passes of a training loop: a pass is thousands of points across."""
    return render(trace_snippet(BY_SLUG["mlp-training"].code))


def _drawn(frame_svg: str) -> tuple[set[str], dict[str, str], ET.Element]:
    """The ids a frame shows, the texts of its value and grad slots, and its drawing."""
    root = ET.fromstring(frame_svg)
    drawing = root.find("svg:svg", NS)
    visible, texts = set(), {}
    for group in drawing.iter(f"{{{SVG}}}g"):
        classes = (group.get("class") or "").split()
        if not {"node", "edge"} & set(classes):
            continue
        if "hidden" not in classes:
            visible.add(group.get("id"))
        for text in group.findall("svg:text", NS):
            if text.get("class") in ("value", "grad"):
                texts[f"{group.get('id')}:{text.get('class')}"] = text.text or ""
    return visible, texts, root


@pytest.mark.parametrize("view", ["tensors", "autograd"])
def test_each_frame_shows_what_the_player_shows_at_its_step(seed, view):
    steps = StepRange.of(len(seed["steps"]))
    drawn = list(frames(seed, view, steps))
    assert [f.index for f in drawn] == list(range(len(seed["steps"])))
    for frame in drawn:
        visible, texts, _ = _drawn(frame.svg)
        state = state_at(seed["steps"], view, frame.index)
        assert visible == set(state.visible)
        for gid, text in state.grads.items():
            if f"{gid}:grad" in texts:
                assert texts[f"{gid}:grad"] == text
        for gid, text in state.values.items():
            if f"{gid}:value" in texts:
                assert texts[f"{gid}:value"] == text


def test_every_frame_of_an_export_has_one_size_and_its_steps_caption(seed):
    steps = StepRange.of(len(seed["steps"]))
    drawn = list(frames(seed, "tensors", steps))
    assert len({(f.width, f.height) for f in drawn}) == 1
    for frame in drawn:
        _, _, root = _drawn(frame.svg)
        caption = [
            "".join(text.itertext()) for text in root.findall("svg:text", NS)
        ]  # the frame's own texts: the heading, then the narration's lines
        step = seed["steps"][frame.index]
        assert caption[0] == f"Step {frame.index + 1} of {steps.total} · {step['phase']}"
        words = " ".join(caption[1:]).split()
        assert words == step["text"].replace("`", "").split()


def test_quoted_code_in_the_narration_is_set_in_monospace(seed):
    step = next(s for s in seed["steps"] if "`" in s["text"])
    (frame,) = frames(
        seed, "tensors", StepRange.of(len(seed["steps"]), step["index"] + 1, step["index"] + 1)
    )
    _, _, root = _drawn(frame.svg)
    quoted = step["text"].split("`")[1]
    spans = [s for s in root.iter(f"{{{SVG}}}tspan") if "monospace" in (s.get("font-family") or "")]
    assert quoted.replace(" ", "") in "".join(s.text for s in spans).replace(" ", "")


def test_a_range_gives_only_its_steps(seed):
    drawn = list(frames(seed, "autograd", StepRange.of(len(seed["steps"]), 3, 5)))
    assert [f.index for f in drawn] == [2, 3, 4]


def test_each_pass_of_a_loop_is_framed_on_that_pass(loop):
    meta = loop["views"]["tensors"]
    assert loop["generations"] > 1
    for frame in frames(loop, "tensors", StepRange.of(len(loop["steps"]))):
        _, _, root = _drawn(frame.svg)
        generation = loop["steps"][frame.index]["generation"]
        expected = meta["frames"][generation - 1]
        box = [float(v) for v in root.find("svg:svg", NS).get("viewBox").split()]
        assert box == pytest.approx(expected)


def _on_slide(frame_svg: str) -> tuple[list[float], float]:
    """The drawing's viewBox, and its smallest label's size in points on the frame (its font
    size times the drawing's scale); a step that shows nothing yet has no label: infinity."""
    drawing = ET.fromstring(frame_svg).find("svg:svg", NS)
    box = [float(v) for v in drawing.get("viewBox").split()]
    scale = float(drawing.get("width")) / box[2]
    assert float(drawing.get("height")) / box[3] == pytest.approx(scale, rel=1e-3)
    fonts = [
        float(t.get("font-size")) for t in drawing.iter(f"{{{SVG}}}text") if t.get("font-size")
    ]
    return box, min(fonts, default=float("inf")) * scale


def test_the_slide_is_16_to_9():
    assert SLIDE[0] / SLIDE[1] == pytest.approx(16 / 9)


@pytest.mark.parametrize("view", ["tensors", "autograd"])
def test_a_training_loops_frames_are_slides_with_labels_of_9_pt(mlp, view):
    """Its first pass and its last, the biggest: each step is shown through a window at 9 pt,
    kept inside its pass's frame (fitting a pass whole drew its labels at about 1 pt)."""
    total = len(mlp["steps"])
    meta = mlp["views"][view]
    for steps in (StepRange.of(total, 1, 25), StepRange.of(total, total - 24, total)):
        for frame in frames(mlp, view, steps):
            assert (frame.width, frame.height) == SLIDE
            # only what the step shows is drawn (a loop's drawing holds every pass)
            groups = ET.fromstring(frame.svg).iter(f"{{{SVG}}}g")
            assert not [g for g in groups if "hidden" in (g.get("class") or "").split()]
            box, label = _on_slide(frame.svg)
            assert label >= MIN_LABEL_PT - 0.01, f"step {frame.index + 1}: {label:.2f} pt"
            passed = meta["frames"][mlp["steps"][frame.index]["generation"] - 1]
            for axis in (0, 1):  # inside the pass's frame, along each side it fits in
                start, size = box[axis], box[axis + 2]
                low, extent = passed[axis], passed[axis + 2]
                if size <= extent:
                    assert low - 0.01 <= start <= low + extent - size + 0.01


@pytest.mark.parametrize("view", ["tensors", "autograd"])
def test_a_small_graph_is_still_framed_whole_on_its_slide(seed, view):
    meta = seed["views"][view]
    for frame in frames(seed, view, StepRange.of(len(seed["steps"]))):
        assert (frame.width, frame.height) == SLIDE
        box, label = _on_slide(frame.svg)
        assert box == pytest.approx(meta["frames"][0])
        assert label >= MIN_LABEL_PT


def test_the_dark_theme_draws_on_a_dark_background_with_light_text(seed):
    (frame,) = frames(seed, "tensors", StepRange.of(len(seed["steps"]), 1, 1), "dark")
    root = ET.fromstring(frame.svg)
    assert root.find("svg:rect", NS).get("fill") == THEMES["dark"]["background"]
    heading = root.findall("svg:text", NS)[1]
    assert heading.get("fill") == THEMES["dark"]["ink"]
    assert _contrast(THEMES["dark"]["ink"], THEMES["dark"]["background"]) >= 7
    assert _contrast(THEMES["light"]["ink"], THEMES["light"]["background"]) >= 7


def test_a_snippets_names_stay_text_in_a_frame():
    hostile = "</svg><script>alert(1)</script>"
    code = f"import torch\nx = torch.tensor(2.0, requires_grad=True)\nprint('{hostile}')\n"
    rendered = render(trace_snippet(code))
    shown = []
    for frame in frames(rendered, "tensors", StepRange.of(len(rendered["steps"]))):
        root = ET.fromstring(frame.svg)  # well-formed: nothing the snippet printed broke out
        assert not list(root.iter(f"{{{SVG}}}script"))
        shown.append("".join(root.itertext()).replace(" ", ""))
    assert any(hostile.replace(" ", "") in text for text in shown)  # shown, as text


def _contrast(a: str, b: str) -> float:
    def luminance(colour: str) -> float:
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)
