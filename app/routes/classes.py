"""A class on the web: starting one, the instructor's private pages, joining, and the streams.

The instructor's pages live under `/classes/{id}/teach/{key}`: the key is the secret, so every
answer there says `Referrer-Policy: no-referrer` (no link out carries it away) and
`Cache-Control: no-store`. A wrong key is a 404, as an unknown class is. Students join at
`/join` and carry a signed cookie naming their class and their number in it; lessons.py asks
`membership_for` whether a page's answers are to be recorded. The service is app/classes.py,
the streams' events app/class_events.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Header, Request
from fastapi.responses import (
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)

from app.class_events import STOPPING, ClassEvents, Full
from app.classes import (
    COOKIE,
    DEFAULT_RETENTION_DAYS,
    MAX_NAME,
    MAX_TITLE,
    ClassError,
    ClassGone,
    Membership,
    Target,
    given,
    qr_svg,
)
from app.dependencies import (
    ClassesDep,
    ClassEventsDep,
    LessonsDep,
    RequesterDep,
    TracesDep,
    get_classes,
    get_metrics,
)
from app.public_url import public_url
from app.routes.pages import render_page
from app.store.classes import ClassRow

PING_SECONDS = 15.0  # a comment on an idle stream: proxies keep it open, a gone client shows
STREAM_SECONDS = 600.0  # a stream ends after this; EventSource connects again by itself
PRIVATE = {"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


router = APIRouter()


# ***** what lessons.py asks *****


async def membership_for(request: Request, target: Target) -> Membership | None:
    """The class the request's cookie names, if it is live and taught on `target`."""
    cookie = request.cookies.get(COOKIE)
    if not cookie:
        return None
    found = await asyncio.to_thread(get_classes(request).membership, cookie)
    return found if found is not None and found.target == target else None


async def record(request: Request, membership: Membership, asked, answers, feedback) -> None:
    """A graded answer of a class's member, recorded (a reveal the instructor sent is not the
    student's own: not recorded)."""
    if answers.all("class_reveal"):
        return
    submission = given(asked.question, answers, asked.picks, feedback)
    await asyncio.to_thread(get_classes(request).record, membership, submission)
    get_metrics(request).class_events.labels("answered").inc()


# ***** starting a class *****


@router.post("/classes")
async def start_class(
    request: Request,
    classes: ClassesDep,
    shelf: LessonsDep,
    requester: RequesterDep,
    lesson: Annotated[str, Form()] = "",
    trace: Annotated[str, Form()] = "",
    title: Annotated[str, Form()] = "",
    retention_days: Annotated[str, Form()] = str(DEFAULT_RETENTION_DAYS),
):
    # a ClassError raised here is answered by answer_class_error (app/main.py)
    if bool(lesson) == bool(trace):
        raise ClassError("Start a class from one lesson or one trace.", 422)
    if len(title) > MAX_TITLE:
        raise ClassError(f"A class's title is at most {MAX_TITLE} characters.", 422)
    if lesson:
        found = shelf.library().get(lesson)
        if found is None:
            raise ClassError(f"There is no lesson {lesson!r}.", 404)
        target = Target("lesson", lesson)
        title = title or found.lesson.title
    else:
        store = request.app.state.store
        if len(trace) > 64 or not await asyncio.to_thread(store.has, trace):
            raise ClassError(f"There is no trace {trace[:64]!r}.", 404)
        target = Target("trace", trace)
    try:
        days = int(retention_days or DEFAULT_RETENTION_DAYS)
    except ValueError:
        raise ClassError("Keep the answers for a whole number of days.", 422) from None
    row, key = await asyncio.to_thread(
        classes.start, target, title, days, requester.session, requester.address
    )
    get_metrics(request).class_events.labels("started").inc()
    return RedirectResponse(f"/classes/{row.id}/teach/{key}", 303, headers=PRIVATE)


def answer_class_error(request: Request, error: ClassError) -> Response:
    """A class request that cannot be done, as a page saying why (app/main.py's handler)."""
    context = {"message": str(error)}
    return render_page(request, "class_problem.html", context, error.status, headers=PRIVATE)


# ***** the instructor's pages *****


async def taught_class(request: Request, class_id: str, key: str) -> ClassRow:
    """The class an instructor's link names, its key checked: else ClassGone, a 404."""
    row = await asyncio.to_thread(get_classes(request).teaching, class_id, key)
    if row is None:
        raise ClassGone
    return row


TaughtDep = Annotated[ClassRow, Depends(taught_class)]


async def _questions(request: Request, row, shelf, traces, requester) -> list:
    """The class's questions, in its page's order."""
    target = Target.of(row)
    if target.kind == "lesson":
        found = shelf.library().get(target.ident)
        return list(found.lesson.questions) if found else []
    quiz = await traces.quiz(target.ident, requester)
    from app.lessons import forms

    return [asked.question for asked in forms.ask(quiz)]


async def _results_context(request, row, key, classes, shelf, traces, requester) -> dict:
    questions = await _questions(request, row, shelf, traces, requester)
    results = await asyncio.to_thread(classes.results, row, questions)
    members = await asyncio.to_thread(classes.members, row)
    base = f"/classes/{row.id}/teach/{key}"
    return {"taught": row, "results": results, "members": members, "teach": base}


@router.get("/classes/{class_id}/teach/{key}", response_class=HTMLResponse)
async def teach(
    request: Request,
    row: TaughtDep,
    key: str,
    classes: ClassesDep,
    shelf: LessonsDep,
    traces: TracesDep,
    requester: RequesterDep,
):
    from app.routes import lessons

    target = Target.of(row)
    if target.kind == "lesson":
        page = await lessons.lesson_page(request, target.ident, shelf, traces, requester)
    else:
        page = await lessons.quiz_page(request, target.ident, traces, requester)
    if isinstance(page, Response):
        return page
    context = await _results_context(request, row, key, classes, shelf, traces, requester)
    join = public_url(request, f"/join/{row.code}")
    expires_on = datetime.fromtimestamp(row.expires, UTC).strftime("%-d %B %Y")
    context.update(join_url=join, qr=qr_svg(join), target=target, expires_on=expires_on)
    return render_page(request, "class_teach.html", {**page, **context}, headers=PRIVATE)


@router.get("/classes/{class_id}/teach/{key}/results", response_class=HTMLResponse)
async def results(
    request: Request,
    row: TaughtDep,
    key: str,
    classes: ClassesDep,
    shelf: LessonsDep,
    traces: TracesDep,
    requester: RequesterDep,
):
    context = await _results_context(request, row, key, classes, shelf, traces, requester)
    return render_page(request, "_class_results.html", context, headers=PRIVATE)


@router.get("/classes/{class_id}/teach/{key}/results.csv")
async def results_csv(row: TaughtDep, classes: ClassesDep):
    text = await asyncio.to_thread(classes.csv_text, row)
    headers = {**PRIVATE, "Content-Disposition": f'attachment; filename="class-{row.code}.csv"'}
    return Response(text, media_type="text/csv; charset=utf-8", headers=headers)


@router.post("/classes/{class_id}/teach/{key}/pace")
async def pace(
    row: TaughtDep,
    key: str,
    classes: ClassesDep,
    step: Annotated[str, Form()] = "",
    release: Annotated[str | None, Form()] = None,
    hx_request: Annotated[str | None, Header()] = None,
):
    chosen = None
    if release is None and step.strip():
        try:
            chosen = int(step)
        except ValueError:
            raise ClassError("The step is a whole number, from 1.", 422) from None
    await asyncio.to_thread(classes.pace, row, chosen)
    return _done(row.id, key, hx_request)


@router.post("/classes/{class_id}/teach/{key}/reveal")
async def reveal(
    row: TaughtDep,
    key: str,
    classes: ClassesDep,
    question: Annotated[str, Form()] = "",
    hx_request: Annotated[str | None, Header()] = None,
):
    await asyncio.to_thread(classes.reveal, row, question)
    return _done(row.id, key, hx_request)


@router.post("/classes/{class_id}/teach/{key}/end")
async def end(request: Request, row: TaughtDep, classes: ClassesDep):
    await asyncio.to_thread(classes.end, row)
    message = "The class has ended: its members and their answers are deleted."
    return render_page(request, "class_problem.html", {"message": message}, headers=PRIVATE)


def _done(class_id: str, key: str, hx_request: str | None) -> Response:
    if hx_request:
        return Response(status_code=204, headers=PRIVATE)
    return RedirectResponse(f"/classes/{class_id}/teach/{key}", 303, headers=PRIVATE)


@router.get("/classes/{class_id}/teach/{key}/events")
async def teach_events(request: Request, row: TaughtDep, events: ClassEventsDep) -> Response:
    return _stream(request, events, row, "teach", ("answers", "members"), PRIVATE)


# ***** students *****


@router.get("/join", response_class=HTMLResponse)
def join_form(request: Request):
    return render_page(request, "class_join.html", {"code": "", "max_name": MAX_NAME})


@router.get("/join/{code}", response_class=HTMLResponse)
def join_form_filled(request: Request, code: str):
    return render_page(request, "class_join.html", {"code": code[:20], "max_name": MAX_NAME})


@router.post("/join")
async def join(
    request: Request,
    classes: ClassesDep,
    code: Annotated[str, Form()] = "",
    name: Annotated[str, Form()] = "",
):
    cookie = request.cookies.get(COOKIE)
    try:
        if len(name) > MAX_NAME:
            raise ClassError(f"A name here is at most {MAX_NAME} characters.", 422)
        membership = await asyncio.to_thread(classes.join, code, name, cookie)
    except ClassError as error:
        context = {"code": code[:20], "name": name[:MAX_NAME], "max_name": MAX_NAME}
        context["message"] = str(error)
        return render_page(request, "class_join.html", context, error.status)
    get_metrics(request).class_events.labels("joined").inc()
    value, max_age = classes.cookie(membership)
    answer = RedirectResponse(membership.target.path, 303)
    secure = public_url(request, "/").startswith("https:")
    answer.set_cookie(
        COOKIE, value, max_age=max_age, path="/", httponly=True, samesite="lax", secure=secure
    )
    return answer


@router.post("/classes/leave")
def leave(request: Request, back: Annotated[str, Form()] = "/"):
    # only a path of this site: never an open redirect ("//x" and "/\\x" are other sites)
    own = back.startswith("/") and not back.startswith(("//", "/\\")) and len(back) <= 300
    answer = RedirectResponse(back if own else "/", 303)
    answer.delete_cookie(COOKIE, path="/")
    return answer


@router.get("/classes/{class_id}/follow")
async def follow(request: Request, class_id: str, events: ClassEventsDep) -> Response:
    membership = await membership_for_class(request, class_id)
    if membership is None:
        message = "Join this class first: its events are for its members."
        return render_page(request, "class_problem.html", {"message": message}, 404)
    first = [("pace", {"step": membership.row.paced_step})]
    return _stream(request, events, membership.row, "follow", ("pace", "reveal"), {}, first)


async def membership_for_class(request: Request, class_id: str) -> Membership | None:
    found = await asyncio.to_thread(get_classes(request).membership, request.cookies.get(COOKIE))
    return found if found is not None and found.row.id == class_id else None


# ***** the streams *****


def _stream(request, events: ClassEvents, row, role, kinds, headers, first=()) -> Response:
    if not events.room(row.id, role):
        message = "Too many pages are following this class: close one and reload."
        return render_page(request, "class_problem.html", {"message": message}, 429)
    headers = {**headers, "Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return _EventStream(get_classes(request), events, row.id, role, kinds, first, headers)


class _EventStream(StreamingResponse):
    """A class's events as server-sent events. It subscribes before its headers go out, so a
    client that sees the stream open hears every event from then on, and only once it is
    sent (a request dropped before that holds no place). It ends when its client goes (the
    request's task is cancelled: app/disconnect.py), when the class ends, or in time (the
    browser's EventSource connects again by itself)."""

    def __init__(self, classes, events, class_id, role, kinds, first, headers) -> None:
        super().__init__((), media_type="text/event-stream", headers=headers)
        self._classes, self._events, self._class_id = classes, events, class_id
        self._role, self._kinds, self._first = role, kinds, first

    async def __call__(self, scope, receive, send) -> None:
        try:
            subscription = await self._events.subscribe(self._class_id, self._role, self._kinds)
        except Full as refused:
            await PlainTextResponse(str(refused), 429)(scope, receive, send)
            return
        try:
            start = {"type": "http.response.start", "status": 200, "headers": self.raw_headers}
            await send(start)
            async for text in self._texts(subscription):
                await send({"type": "http.response.body", "body": text.encode(), "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            subscription.close()

    async def _texts(self, subscription) -> AsyncIterator[str]:
        yield ": connected\n\n"
        for kind, data in self._first:
            yield _event(kind, data)
        loop = asyncio.get_running_loop()
        until = loop.time() + STREAM_SECONDS
        while loop.time() < until:
            try:
                event = await asyncio.wait_for(subscription.queue.get(), PING_SECONDS)
            except TimeoutError:
                if await asyncio.to_thread(self._classes.get, self._class_id) is None:
                    return  # swept while nothing happened
                yield ": ping\n\n"
                continue
            if event.kind == "ended":
                yield _event("ended", {})
                return
            if event.kind == STOPPING:
                return  # the browser connects again, to a server that is not stopping
            yield _event(event.kind, event.data)  # one of its kinds (Subscription)


def _event(kind: str, data: dict) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"
