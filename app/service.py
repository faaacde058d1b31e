"""Between HTTP and everything else: run or find a trace, fetch one, draw its page.

The pages and the API both come through here, so they can never disagree about what is stored,
what counts against a quota, or how a trace is drawn. Nothing here knows about requests or
responses; routes turn what it answers (and its exceptions) into HTTP.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import engine
from app import examples, execution
from app.busy import Busy
from app.config import MIB, Settings
from app.export.options import ExportRequest
from app.metrics import Metrics
from app.page_cache import PageCache
from app.recent_snippets import RecentSnippets
from app.render.page import shown_trace
from app.render_pool import RawJSON, RenderPool, TooLargeToDraw
from app.sandbox import Requester, statuses
from app.shares import Shares
from app.store import ID_LENGTH, Owner, Store

log = logging.getLogger("gradtrace")

# what a trace id can be (Store.public_id, or an older trace's trace_id): anything else is
# unknown without asking the store
_TRACE_ID = re.compile(rf"[a-z2-7]{{{ID_LENGTH}}}")

# Endings that say more about the server's load than about the code: not kept, so the same
# code is tried again next time.
TRANSIENT = {statuses.WALL_LIMIT, statuses.CRASHED}

KNOWN_DIGESTS = 10_000  # stored traces' digests remembered (about 100 bytes each)
VISIT_EVERY = 600.0  # seconds: a visitor's views of one trace within this are written once
KEPT_VISITS = 50_000  # visits remembered for that (the oldest forgotten first)


class OverQuota(Busy):
    """This session or address has stored as many new traces as a window allows."""

    status_code = 429
    reason = "quota"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


@dataclass(frozen=True)
class Quota:
    traces: int
    bytes: int


class Traces:
    def __init__(
        self,
        store: Store,
        settings: Settings,
        pool: RenderPool,
        cache: PageCache,
        metrics: Metrics | None = None,
    ) -> None:
        self.store = store
        self.metrics = metrics or Metrics()
        self.pool = pool
        self.cache = cache
        limits = pool.settings
        self.renders = Shares(
            limits.session_renders,
            limits.address_renders,
            what="pages being drawn",
            retry_after=limits.retry_after,
        )
        self.exports = Shares(
            limits.session_exports,
            limits.address_exports,
            what="an export being made",
            retry_after=limits.export_retry_after,
        )
        # each stored trace's digest, once its text has been read: what a page's entity tag
        # names, so a revalidated page is answered 304 without reading anything
        self._digests: OrderedDict[str, str] = OrderedDict()
        self._visits: OrderedDict[tuple, float] = OrderedDict()  # (trace, visitor): when written
        # live runs' code, by the id they would be stored under (see run_live)
        self.recent = RecentSnippets()
        limits = settings.limits
        self.window = limits.quota_window_seconds
        self.per_session = Quota(limits.session_quota_traces, limits.session_quota_mib * MIB)
        self.per_address = Quota(limits.address_quota_traces, limits.address_quota_mib * MIB)

    async def find_or_run(
        self, code: str, requester: Requester, *, site: bool = False
    ) -> tuple[str, dict | None]:
        """The id of the trace of `code`, and the trace if it was run now: the stored one's id
        (and None: it is not read here; `page` and `stored_text` read it when they may) if
        there is one, since the same code is never run twice; else a new run, stored unless its
        ending was the server's fault.

        The site's own snippets (a lesson's, `site`, and the examples') are pinned: never
        evicted. They belong to nobody, so a lesson's first visitor is not charged for one.
        Raises OverQuota before running when the requester has stored too much lately, and
        SandboxBusy when the sandbox has no room."""
        site = site or examples.is_example(code)
        found = await asyncio.to_thread(self.store.find, code)
        if found is not None:
            if site:  # stored by someone before the site showed it
                await asyncio.to_thread(self.store.pin, found)
            return found, None
        owner = None
        if not site:
            owner = self.store.owner(requester.session, requester.address)
            await asyncio.to_thread(self._check_quota, owner)
        execution.run_timing.set((None, None))  # a stand-in for the sandbox (tests) sets none
        trace = await execution.run_snippet_async(code, requester)
        self.metrics.ran(trace["outcome"]["status"], *execution.run_timing.get())
        if trace["outcome"]["status"] in TRANSIENT:
            return self.store.public_id(code), trace  # an id nothing answers at, yet
        return await asyncio.to_thread(self.store.put, code, trace, owner=owner, pinned=site)

    async def run_live(self, code: str, requester: Requester) -> tuple[str, dict | None]:
        """A live run (the editor, as the learner types): as `find_or_run`, through the same
        sandbox admission (the requester's fair share of runs), but never stored and never
        charged to the storage quota: most of these are half-typed steps towards the snippet
        the learner keeps. The id is the one the trace will have once stored (`keep_live`), and
        the code is remembered under it for a while, so its page can still be made (`kept`)."""
        found = await asyncio.to_thread(self.store.find, code)
        if found is not None:
            return found, None
        execution.run_timing.set((None, None))
        trace = await execution.run_snippet_async(code, requester)
        self.metrics.ran(trace["outcome"]["status"], *execution.run_timing.get())
        ident = self.store.public_id(code)
        if trace["outcome"]["status"] not in TRANSIENT:  # as find_or_run: tried again next time
            self.recent.remember(ident, code)
        return ident, trace

    async def keep_live(self, code: str, requester: Requester) -> tuple[str, bool]:
        """Store a live run's snippet, as Run would (the quota applies: OverQuota): when the
        learner shares it, quizzes on it or leaves its page. Its id, and whether it is stored
        (a run whose ending was the server's fault is not)."""
        ident, _ = await self.find_or_run(code, requester)
        stored = await asyncio.to_thread(self.store.has, ident)
        if stored:
            self.recent.forget(ident)
        return ident, stored

    async def visit_or_keep(self, ident: str, requester: Requester) -> str | None:
        """`visit`; and the address of a recent live run never kept (a reload, a link copied
        from the address bar, "Quiz me" opened in a new tab) is stored now, as Run would store
        it, if its snippet is still remembered. Raises what `find_or_run` raises."""
        recorded = await self.visit(ident, requester)
        if recorded is None and await self.kept(ident, requester):
            recorded = await self.visit(ident, requester)
        return recorded

    async def kept(self, ident: str, requester: Requester) -> bool:
        """Whether a recent live run's page may be shown after all: its snippet, remembered
        under `ident`, now stored (`keep_live`). False when `ident` is no recent live run."""
        code = self.recent.code_of(ident) if _TRACE_ID.fullmatch(ident) else None
        if code is None:
            return False
        _, stored = await self.keep_live(code, requester)
        return stored

    def _check_quota(self, owner: Owner) -> None:
        session, address = self.store.usage(owner, time.time() - self.window)
        for used, quota, whose in (
            (session, self.per_session, "this browser"),
            (address, self.per_address, "your address"),
        ):
            if used.traces >= quota.traces or used.bytes >= quota.bytes:
                minutes = round(self.window / 60)
                raise OverQuota(
                    f"{whose.capitalize()} has stored {used.traces:,} new traces in the last "
                    f"{minutes} minutes, as many as may be stored; try again later (stored "
                    "snippets still open at once).",
                    retry_after=max(60, int(self.window / 4)),
                )

    async def run_again(self, code: str, requester: Requester) -> tuple[str, dict, bool]:
        """An outdated trace's code, run by today's engine: its id, its trace, and whether it is
        stored (so old links may move to the new id; a run whose ending was the server's fault is
        not, and only this answer has it). Raises what `find_or_run` raises."""
        ident, trace = await self.find_or_run(code, requester)
        return ident, trace, await asyncio.to_thread(self.store.has, ident)

    async def outdated(self, ident: str) -> bool:
        """Whether a stored trace was recorded by an older engine, whose traces say less (before
        2.13.0+gradtrace.2 no `.grad` change was an event): its page would show stale labels."""
        recorded = await asyncio.to_thread(self.store.engine_of, ident)
        return recorded is not None and recorded != engine.__version__

    def fetch_json(self, ident: str, viewer: Requester | None = None) -> str | None:
        """A stored trace as JSON text, counted as seen (so it is not evicted as unseen), and
        as opened by `viewer` unless it is its owner (Store.viewed: eviction keeps longest what
        the most others opened)."""
        if not _TRACE_ID.fullmatch(ident):
            return None
        text = self.store.get_json(ident)
        if text is not None:
            seen_by = None if viewer is None else self.store.owner(viewer.session, viewer.address)
            self.store.viewed(ident, seen_by)
        return text

    async def code_of(self, ident: str) -> str | None:
        """A stored trace's code, or None: the trace itself is not read."""
        if not _TRACE_ID.fullmatch(ident):
            return None
        return await asyncio.to_thread(self.store.code_of, ident)

    async def visit(self, ident: str, requester: Requester) -> str | None:
        """The engine version that recorded a stored trace, now counted as seen by `requester`
        (so it is not evicted as unseen), or None when nothing is stored as `ident`. Small
        queries, no trace read: every page asks this before anything else."""
        if not _TRACE_ID.fullmatch(ident):
            return None
        # a view is written once in a while per visitor (a write is an fsync): the eviction
        # order needs who viewed and roughly when, not every reload of a page
        visit = (ident, requester.session, requester.address)
        now = time.monotonic()
        counted = now - self._visits.get(visit, -VISIT_EVERY) < VISIT_EVERY

        def visited() -> str | None:
            recorded = self.store.engine_of(ident)
            if recorded is not None and not counted:
                self.store.viewed(ident, self.store.owner(requester.session, requester.address))
            return recorded

        recorded = await asyncio.to_thread(visited)
        if recorded is not None and not counted:
            self._visits[visit] = now
            if len(self._visits) > KEPT_VISITS:
                self._visits.popitem(last=False)
        return recorded

    async def page(
        self,
        ident: str,
        requester: Requester,
        expand: Iterable[str] = (),
        *,
        trace: dict | None = None,
    ) -> dict:
        """What the player shows for a stored trace (or for `trace`, a run in hand): the page
        as app.render.page.drawn_page makes it, with `digest` (of the stored text, for its
        entity tag; None for `trace`). Drawn in a render worker under a budget, once per (id,
        stacks and modules opened); openings the trace does not have are dropped, so made-up
        ones are the plain page, not a page of their own. A trace that cannot be drawn within
        the budget gets its steps in words instead (`undrawn`).

        Nothing is read from the store until the page is known not to be cached and the
        requester has a place in its share (app/shares.py). Raises RenderBusy (ShareUsed, its
        429) when there is no room."""
        wanted = set(expand)
        plain = await self._drawn(ident, (), requester, trace)
        # modules first: opening one may draw stacks the plain page does not have
        modules = tuple(sorted(_openable(plain, wanted, MODULE)))
        base = await self._drawn(ident, modules, requester, trace) if modules else plain
        stacks = _openable(base, wanted, STACK)
        if not stacks:
            return base
        return await self._drawn(ident, tuple(sorted({*modules, *stacks})), requester, trace)

    async def _drawn(self, ident, opened: tuple, requester: Requester, trace: dict | None):
        async def draw() -> dict:
            async with self.renders.hold(requester):
                source, digest = await self._source(ident, trace)
                page = _checked_page(await self.pool.page(source, ident, opened))
                return {**page, "digest": digest, "opened": opened}

        try:
            return await self.cache.get((ident, opened), draw)
        except TooLargeToDraw as failure:
            log.warning("trace %s was not drawn: %s", ident, failure.reason)
            reason = failure.reason

        async def words() -> dict:
            async with self.renders.hold(requester):
                source, digest = await self._source(ident, trace)
                told = _checked_words(await self.pool.narration(source))
                return {**told, "digest": digest}

        try:
            told = await self.cache.get((ident, "words"), words)
        except TooLargeToDraw:
            shown = await self._shown_anyway(ident, requester, trace)
            told = {"steps": [], "trace": shown, "digest": None}
        return {
            "ident": ident,
            "trace": told["trace"],
            "digest": told["digest"],
            "undrawn": {
                "reason": f"This trace could not be drawn: {reason}.",
                "steps": told["steps"],
            },
        }

    async def _shown_anyway(self, ident, requester: Requester, trace: dict | None):
        """What a page prints of a trace (its code, output, ending) when no worker could say,
        its drawing and its words having both failed: read here, once, and kept (the failures
        are remembered, so this is not asked again and again)."""
        if trace is not None:
            return shown_trace(trace)

        async def read() -> dict:
            async with self.renders.hold(requester):
                source, _ = await self._source(ident, None)
                return await asyncio.to_thread(lambda: shown_trace(json.loads(source.text)))

        try:
            return await self.cache.get((ident, "shown"), read)
        except TooLargeToDraw:
            return None

    async def _source(self, ident: str, trace: dict | None) -> tuple[dict | RawJSON, str | None]:
        """What a worker is sent: the run in hand, or the stored text as it is (never parsed
        here), with the digest of that text."""
        if trace is not None:
            return trace, None
        text = await asyncio.to_thread(self.store.get_json, ident)
        if text is None:
            raise TooLargeToDraw("the trace is no longer stored")
        digest = await asyncio.to_thread(content_digest, text)
        self._digests[ident] = digest
        self._digests.move_to_end(ident)
        if len(self._digests) > KNOWN_DIGESTS:
            self._digests.popitem(last=False)
        return RawJSON(text), digest

    def known_digest(self, ident: str) -> str | None:
        """The digest of a stored trace's text, if it has been read lately (see `page`)."""
        return self._digests.get(ident)

    async def quiz(
        self,
        ident: str,
        requester: Requester,
        questions: list[dict] | None = None,
        *,
        trace: dict | None = None,
    ):
        """Quick checks for a trace (app.lessons.quiz.context), worked out in a render worker
        and kept with its pages: a lesson's `questions`, or the generated ones. A trace too
        large to quiz gets none, and says why (`unavailable`)."""
        asked = "" if questions is None else content_digest(json.dumps(questions, sort_keys=True))

        async def work() -> dict:
            async with self.renders.hold(requester):
                source, _ = await self._source(ident, trace)
                return await self.pool.quiz(source, questions)

        try:
            return await self.cache.get((ident, "quiz", asked), work)
        except TooLargeToDraw as failure:
            log.warning("trace %s was not quizzed: %s", ident, failure.reason)
            return {"questions": [], "picks": {}, "unavailable": failure.reason}

    async def export(
        self,
        ident: str,
        requester: Requester,
        request: ExportRequest,
        live_url: str | None,
        *,
        trace: dict | None = None,
    ) -> dict:
        """A file of the trace (app.export), drawn in a render worker under the export budget
        and kept with its pages: {"reply": the worker's reply, as it gave it ({"data": base64}
        or {"bad_option": ...} or {"unavailable": ...}, if it is to be believed), "digest": as
        `page` has it}. Each client makes one export at a time (its share
        of exports), read from the store only once it has its place. Raises TooLargeToDraw
        when it cannot be drawn in time, RenderBusy when there is no room (ShareUsed, its 429,
        when this client's share is taken)."""
        fields = dataclasses.asdict(request)

        async def make() -> dict:
            async with self.exports.hold(requester):
                source, digest = await self._source(ident, trace)
                made = await self.pool.export(source, ident, fields, live_url)
                return {"reply": made, "digest": digest}

        return await self.cache.get((ident, "export", *fields.values(), live_url), make)

    async def picture(
        self,
        ident: str,
        requester: Requester,
        picture: tuple[str, str, str, int | None],
        *,
        trace: dict | None = None,
    ) -> dict:
        """One step as a picture (app.export.make.picture; `picture` is its kind, view, theme
        and step), answered as `export` is, from the requester's share of pages."""
        kind, view, theme, step = picture
        request = {"kind": kind, "view": view, "theme": theme, "step": step}

        async def make() -> dict:
            async with self.renders.hold(requester):
                source, digest = await self._source(ident, trace)
                return {"reply": await self.pool.picture(source, request), "digest": digest}

        return await self.cache.get((ident, "picture", kind, view, theme, step), make)


MODULE, STACK = "m", "g"  # how a module call's token (m1) and a stack's id (g1) begin


def _checked_page(page) -> dict:
    """A render worker's page, read as the hostile input it may be (it drew a hostile trace):
    its shape checked, and its player data free of any `<` (Jinja's JSON writes every one as
    \u003c), so it cannot end the <script> that holds it. Anything else is a failure to draw."""
    fine = (
        isinstance(page, dict)
        and isinstance(page.get("player_json"), str)
        and "<" not in page["player_json"]
        and isinstance(page.get("steps_html"), str)
        and isinstance(page.get("drawings"), dict)
        and all(isinstance(svg, str) for svg in page["drawings"].values())
        and isinstance(page.get("openable"), list)
        and all(isinstance(token, str) for token in page["openable"])
        and isinstance(page.get("rendered"), dict)
        and _shown_fine(page.get("trace"))
    )
    if not fine:
        raise TooLargeToDraw("the render worker's reply was unreadable")
    return page


def _checked_words(told) -> dict:
    """The narration fallback's reply, checked as `_checked_page` checks a page."""
    fine = (
        isinstance(told, dict)
        and isinstance(told.get("steps"), list)
        and all(isinstance(text, str) for text in told["steps"])
        and _shown_fine(told.get("trace"))
    )
    if not fine:
        raise TooLargeToDraw("the render worker's reply was unreadable")
    return told


def _shown_fine(shown) -> bool:
    return (
        isinstance(shown, dict)
        and isinstance(shown.get("event_count"), int)
        and isinstance(shown.get("outcome"), dict)
        and isinstance(shown.get("code"), str)
    )


def _openable(page: dict, wanted: set[str], kind: str) -> set[str]:
    return {token for token in wanted & set(page.get("openable", ())) if token.startswith(kind)}


def content_digest(text: str) -> str:
    """A short digest of a stored trace's text (blake2b: about 1 GB/s, so a 4 MB trace's costs
    a few milliseconds)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
