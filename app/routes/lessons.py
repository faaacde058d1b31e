"""Lessons and quick checks: `/lessons`, `/lessons/{slug}` (prose beside the player, with its
questions), its answer key, and "Quiz me" on any stored trace (`/t/{id}/quiz`).

A question's form posts to its own URL. htmx gets the feedback alone; a plain post (no
JavaScript) gets the whole page again with that question's feedback in place. A form that
cannot be graded is a 422 with a message saying what to fix, never a 500.
"""

from __future__ import annotations

import json
import logging
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import HTMLResponse, Response

from app.classes import Target
from app.dependencies import LessonsDep, RequesterDep, TracesDep
from app.lessons import forms
from app.lessons.grading import Answers, BadAnswer, Feedback, grade
from app.lessons.overrides import overridden
from app.lessons.source import LessonFile
from app.render.page import player_json, steps_html
from app.routes import classes
from app.routes.busy import shown_as
from app.routes.pages import render_page

log = logging.getLogger("gradtrace.lessons")
REFUSALS_LOGGED = 20  # of a lesson's problems, each cut to a line: a worker's reply is bounded

# a lesson or quiz that cannot be run or drawn now: a page that says so, and when to try again
router = APIRouter(dependencies=[Depends(shown_as("busy.html"))])


@router.get("/lessons", response_class=HTMLResponse)
def lessons(request: Request, shelf: LessonsDep):
    return render_page(request, "lessons.html", {"lessons": shelf.library().lessons})


@router.get("/lessons/{slug}", response_class=HTMLResponse)
async def lesson(
    request: Request, slug: str, shelf: LessonsDep, traces: TracesDep, requester: RequesterDep
):
    context = await lesson_page(request, slug, shelf, traces, requester)
    if isinstance(context, Response):
        return context
    return render_page(request, "lesson.html", context)


@router.post("/lessons/{slug}/questions/{qid}", response_class=HTMLResponse)
async def answer_lesson(
    request: Request,
    slug: str,
    qid: str,
    shelf: LessonsDep,
    traces: TracesDep,
    requester: RequesterDep,
    hx_request: Annotated[str | None, Header()] = None,
):
    context = await lesson_page(request, slug, shelf, traces, requester)
    if isinstance(context, Response):
        return context
    if context["being_fixed"]:  # its checks are not asked, so not graded either: they
        return render_page(request, "lesson.html", context, 409)  # conflict with its run
    return await _answer(request, context, qid, "lesson.html", bool(hx_request))


@router.get("/lessons/{slug}/key", response_class=HTMLResponse)
def lesson_key(request: Request, slug: str, shelf: LessonsDep, answers: bool = True):
    """Every question of a lesson, without playing it: with the answers (the key) or not."""
    found = shelf.library().get(slug)
    if found is None:
        return _missing_lesson(request, slug)
    questions = [forms.Asked(question, ()) for question in found.lesson.questions]
    context = {"lesson": found, "asked": questions, "show_answers": answers}
    return render_page(request, "lesson_key.html", context)


@router.get("/t/{ident}/quiz", response_class=HTMLResponse)
async def trace_quiz(request: Request, ident: str, traces: TracesDep, requester: RequesterDep):
    context = await quiz_page(request, ident, traces, requester)
    if isinstance(context, Response):
        return context
    return render_page(request, "quiz.html", context)


@router.post("/t/{ident}/quiz/{qid}", response_class=HTMLResponse)
async def answer_trace_quiz(
    request: Request,
    ident: str,
    qid: str,
    traces: TracesDep,
    requester: RequesterDep,
    hx_request: Annotated[str | None, Header()] = None,
):
    context = await quiz_page(request, ident, traces, requester)
    if isinstance(context, Response):
        return context
    return await _answer(request, context, qid, "quiz.html", bool(hx_request))


# ***** building the pages *****


async def lesson_page(request: Request, slug: str, shelf, traces, requester) -> dict | Response:
    """A lesson's page context, or the answer instead of it (no such lesson). It says which
    class, if any, the learner's answers here are recorded for (app/routes/classes.py)."""
    library = shelf.library()
    found = library.get(slug)
    if found is None:
        return _missing_lesson(request, slug)
    context = await _lesson_context(found, library, traces, requester)
    context["class_target"] = target = Target("lesson", found.slug)
    context["membership"] = await classes.membership_for(request, target)
    return context


async def quiz_page(request: Request, ident: str, traces, requester) -> dict | Response:
    """A trace's quiz page context, or the answer instead of it (no such trace)."""
    context = await _trace_quiz_context(ident, traces, requester)
    if context is None:
        return render_page(request, "missing.html", {"ident": ident}, 404)
    context["class_target"] = target = Target("trace", ident)
    context["membership"] = await classes.membership_for(request, target)
    return context


async def _asking_page(traces, ident: str, requester, trace: dict | None = None) -> dict:
    """The player of a page that asks questions: every module call opened, since a question
    may ask for any node of the graph, and one inside a module's box could not be picked. It
    offers no link to close them."""
    plain = await traces.page(ident, requester, trace=trace)
    every = [token for token in plain.get("openable", ()) if token.startswith("m")]
    return {**await traces.page(ident, requester, every, trace=trace), "module_links": []}


async def _lesson_context(found: LessonFile, library, traces, requester) -> dict:
    lesson = found.lesson
    ident, trace = await traces.find_or_run(lesson.snippet, requester, site=True)
    page = await _asking_page(traces, ident, requester, trace)
    questions = [question.model_dump(mode="json") for question in lesson.questions]
    quiz = await traces.quiz(ident, requester, questions, trace=trace)
    before, after = library.neighbours(found.slug)
    context = {**page, "lesson": found, "before": before, "after": after}
    context["asked"] = forms.ask(quiz)
    context["unavailable"] = quiz.get("unavailable")
    context["being_fixed"] = _refused(found, quiz)
    context["action"] = f"/lessons/{found.slug}/questions"
    if "rendered" in page and lesson.narration:
        # the lesson's own words for some steps: a few small traces, so parsed again here
        player_data = json.loads(page["player_json"])
        steps = overridden(player_data["steps"], page["lines"], lesson.narration)
        context["player_json"] = player_json({**player_data, "steps": steps})
        context["steps_html"] = steps_html(steps)
    return context


def _refused(found: LessonFile, quiz: dict) -> bool:
    """Whether the lesson's questions were refused for not holding against its run (as
    `gradtrace lessons check` would report them): logged, with why, each time it is asked for."""
    refused = quiz.get("refused")
    if not refused or not isinstance(refused, list):
        return False
    # (its words name the run's tensors, which the snippet named: one line each, no control
    # characters)
    shown = refused[:REFUSALS_LOGGED]
    why = "; ".join("".join(c if c.isprintable() else " " for c in str(i)[:300]) for i in shown)
    log.error("lesson %s is served without its checks until it is fixed: %s", found.path, why)
    return True


async def _trace_quiz_context(ident: str, traces, requester) -> dict | None:
    if await traces.visit_or_keep(ident, requester) is None:
        return None
    page = await _asking_page(traces, ident, requester)
    quiz = await traces.quiz(ident, requester)
    return {
        **page,
        "asked": forms.ask(quiz),
        "unavailable": quiz.get("unavailable"),
        "action": f"/t/{ident}/quiz",
    }


async def _answer(request: Request, context: dict, qid: str, page: str, fragment: bool):
    asked = next((a for a in context["asked"] if a.question.id == qid), None)
    if asked is None or asked.unavailable:
        return render_page(request, "missing.html", {"ident": qid, "what": "question"}, 404)
    form = await request.form()
    answers = Answers({key: form.getlist(key) for key in form})
    status, attempt = 200, 0
    try:
        attempt = answers.attempt()
        feedback = grade(asked.question, answers, asked.picks)
    except BadAnswer as bad:
        feedback, status = Feedback(False, (), problem=str(bad)), 422
    if status == 200 and context.get("membership") is not None:
        await classes.record(request, context["membership"], asked, answers, feedback)
    graded = forms.Asked(asked.question, asked.options, asked.picks, None, feedback, attempt)
    if fragment:
        return render_page(request, "_feedback.html", {**context, "asked": graded}, status)
    context["asked"] = [graded if a is asked else a for a in context["asked"]]
    return render_page(request, page, context, status)


def _missing_lesson(request: Request, slug: str):
    return render_page(request, "missing.html", {"ident": slug, "what": "lesson"}, 404)
