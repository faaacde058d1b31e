"""Reading a lesson file: YAML front matter, then CommonMark prose.

markdown-it-py (with mdit-py-plugins' front-matter rule) splits the file and renders the prose;
raw HTML in it is not passed through, so a lesson's page holds only what Markdown makes. PyYAML
reads the front matter and the model (app/lessons/model.py) validates it. Every problem is a
`Problem` with the file's line, so `gradtrace lessons check` can point at it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin
from pydantic import ValidationError

from app.lessons.model import QUESTION_CLASSES, QUESTION_TYPES, Choice, Lesson, Override

_MARKDOWN = MarkdownIt("commonmark", {"html": False}).use(front_matter_plugin)
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
STEP_LINK = re.compile(r"^#step=(\d+)$")  # a link in the prose to one of the lesson's steps


@dataclass(frozen=True)
class Problem:
    """Something wrong with a lesson, at `line` of its file (1-based; 0: the file as a whole)."""

    line: int
    message: str


@dataclass(frozen=True)
class LessonFile:
    """A lesson read and validated: its model, its prose as HTML and where things are."""

    slug: str
    path: Path
    lesson: Lesson
    html: str
    step_links: tuple[tuple[int, int], ...]  # (line, step) for each `#step=N` link in the prose
    lines: dict[tuple, int]  # a front-matter path (("questions", 1, "answer")) → its line


class BadLesson(Exception):
    def __init__(self, path: Path, problems: list[Problem]) -> None:
        super().__init__(f"{path}: {problems[0].message}" if problems else str(path))
        self.path = path
        self.problems = problems


def read(path: Path) -> LessonFile:
    """The lesson in `path`; BadLesson lists what is wrong with it, each with its line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BadLesson(path, [Problem(0, f"cannot read it: {error}")]) from None
    return parse(text, path)


def parse(text: str, path: Path) -> LessonFile:
    slug = path.stem
    if not _SLUG.match(slug):
        message = f"the file name {path.name!r} is not a slug (lower-case words joined by -)"
        raise BadLesson(path, [Problem(0, message)])
    tokens = _MARKDOWN.parse(text)
    if not tokens or tokens[0].type != "front_matter":
        message = "no front matter: a lesson starts with a line `---`, its YAML, then `---`"
        raise BadLesson(path, [Problem(1, message)])
    head = tokens[0]
    first_line = head.map[0] + 2  # the YAML's first line, after the opening `---`
    try:
        tree = yaml.compose(head.content, Loader=yaml.SafeLoader)
        data = yaml.safe_load(head.content)
    except yaml.YAMLError as error:
        # PyYAML's own message counts lines within the front matter: give the file's instead
        mark = getattr(error, "problem_mark", None)
        line = first_line + mark.line if mark is not None else first_line
        what = getattr(error, "problem", None) or "it cannot be read"
        context = getattr(error, "context", None)
        message = f"the front matter is not YAML: {what}" + (f" ({context})" if context else "")
        raise BadLesson(path, [Problem(line, message)]) from None
    if not isinstance(data, dict):
        raise BadLesson(path, [Problem(first_line, "the front matter is not a mapping of keys")])
    lines = _lines(tree, first_line)
    repeated = _repeated_ids(data, lines, first_line)
    if repeated:
        raise BadLesson(path, repeated)
    try:
        lesson = Lesson.model_validate(data)
    except ValidationError as error:
        problems = [_problem(item, lines, first_line) for item in error.errors()]
        raise BadLesson(path, problems) from None
    body = tokens[1:]
    links = tuple(
        (token.map[0] + 1 if token.map else 0, int(match.group(1)))
        for token in body
        for child in token.children or ()
        if child.type == "link_open"
        and (match := STEP_LINK.match(str(child.attrs.get("href", ""))))
    )
    html = _MARKDOWN.renderer.render(body, _MARKDOWN.options, {})
    return LessonFile(slug, path, lesson, html, links, lines)


def _repeated_ids(data: dict, lines: dict[tuple, int], first_line: int) -> list[Problem]:
    """A question id used twice, reported where it is used again (the model, checking the
    whole lesson, could only point at the front matter)."""
    questions = data.get("questions")
    if not isinstance(questions, list):
        return []
    seen: dict[str, int] = {}
    problems = []
    for index, question in enumerate(questions):
        qid = question.get("id") if isinstance(question, dict) else None
        if not isinstance(qid, str):
            continue
        if qid in seen:
            line = lines.get(("questions", index, "id"), first_line)
            message = f"question {index + 1}'s id {qid!r} is question {seen[qid] + 1}'s too"
            problems.append(Problem(line, message))
        else:
            seen[qid] = index
    return problems


def _problem(item: dict, lines: dict[tuple, int], first_line: int) -> Problem:
    location = tuple(part for part in item["loc"] if not _is_tag(part))
    line = first_line
    for end in range(len(location), 0, -1):  # the deepest part of the path the YAML has
        if location[:end] in lines:
            line = lines[location[:end]]
            break
    message = item["msg"].removeprefix("Value error, ")
    if item["type"] == "extra_forbidden" and location:
        close = difflib.get_close_matches(str(location[-1]), _KEYS, n=1)
        message = f"{message}: did you mean {close[0]!r}?" if close else f"{message} here"
    where = _where(location)
    return Problem(line, f"{where}: {message}" if where else message)


def _where(location: tuple) -> str:
    """A path in the front matter as a person counts: `question 2, choice 1, feedbak`."""
    words = []
    for part in location:
        if isinstance(part, int) and words:
            words[-1] = f"{words[-1].removesuffix('s')} {part + 1}"
        else:
            words.append(str(part))
    return ", ".join(words)


# every key the front matter may use, anywhere in it: what a misspelt key is compared with
_KEYS = sorted(
    {name for model in (Lesson, Choice, Override, *QUESTION_CLASSES) for name in model.model_fields}
)


def _is_tag(part) -> bool:
    """pydantic names a union's branch in an error's path ('choice'); the YAML does not."""
    return part in QUESTION_TYPES


def _lines(node: yaml.Node | None, first_line: int) -> dict[tuple, int]:
    """Every path in the YAML to the line its value starts on."""
    out: dict[tuple, int] = {}

    def walk(node: yaml.Node, path: tuple) -> None:
        out[path] = first_line + node.start_mark.line
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(value, (*path, key.value))
                out[(*path, key.value)] = first_line + key.start_mark.line
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                walk(item, (*path, index))

    if node is not None:
        walk(node, ())
    return out
