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
from collections.abc import Iterable
from dataclasses import dataclass

import engine
from app import examples, execution
from app.config import MIB, Settings
from app.export.options import ExportRequest
from app.page_cache import PageCache
from app.render_pool import RenderPool, TooLargeToDraw
from app.sandbox import Requester, statuses
from app.store import ID_LENGTH, Owner, Store, trace_id

log = logging.getLogger("gradtrace")

# what a trace id can be (store.trace_id): anything else is unknown without asking the store
_TRACE_ID = re.compile(rf"[a-z2-7]{{{ID_LENGTH}}}")

# Endings that say more about the server's load than about the code: not kept, so the same
# code is tried again next time.
TRANSIENT = {statuses.WALL_LIMIT, statuses.CRASHED}


class OverQuota(Exception):
    """This session or address has stored as many new traces as a window allows."""

    status_code = 429

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
        self, store: Store, settings: Settings, pool: RenderPool, cache: PageCache
    ) -> None:
        self.store = store
        self.pool = pool
        self.cache = cache
        self.window = settings.quota_window_seconds
        self.per_session = Quota(settings.session_quota_traces, settings.session_quota_mib * MIB)
        self.per_address = Quota(settings.address_quota_traces, settings.address_quota_mib * MIB)

    async def find_or_run(
        self, code: str, requester: Requester, *, site: bool = False
    ) -> tuple[str, dict]:
        """The trace of `code`: the stored one if there is one (the same code is never run
        twice), else a new run, stored unless its ending was the server's fault.

        The site's own snippets (a lesson's, `site`, and the examples') are pinned: never
        evicted. They belong to nobody, so a lesson's first visitor is not charged for one.
        Raises OverQuota before running when the requester has stored too much lately, and
        SandboxBusy when the sandbox has no room."""
        site = site or examples.is_example(code)
        ident = trace_id(code)
        stored = await asyncio.to_thread(self.store.get, ident)
        if stored is not None:
            if site:  # stored by someone before the site showed it
                await asyncio.to_thread(self.store.pin, ident)
            return ident, stored
        owner = None
        if not site:
            owner = self.store.owner(requester.session, requester.address)
            await asyncio.to_thread(self._check_quota, owner)
        trace = await execution.run_snippet_async(code, requester)
        if trace["outcome"]["status"] in TRANSIENT:
            return ident, trace
        return await asyncio.to_thread(self.store.put, code, trace, owner=owner, pinned=site)

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

    def fetch_json(self, ident: str) -> str | None:
        """A stored trace as JSON text, counted as seen (so it is not evicted as unseen)."""
        if not _TRACE_ID.fullmatch(ident):
            return None
        text = self.store.get_json(ident)
        if text is not None:
            self.store.viewed(ident)
        return text

    async def fetch(self, ident: str) -> dict | None:
        """A stored trace, read and parsed off the event loop (it may be megabytes)."""
        found = await self.fetch_tagged(ident)
        return None if found is None else found[0]

    async def fetch_tagged(self, ident: str) -> tuple[dict, str] | None:
        """A stored trace and a digest of its stored text (what a page's entity tag names: the
        same id could hold another run's trace after an eviction)."""
        text = await asyncio.to_thread(self.fetch_json, ident)
        if text is None:
            return None
        trace = await asyncio.to_thread(json.loads, text)
        return trace, content_digest(text)

    async def page(self, ident: str, trace: dict, expand: Iterable[str] = ()) -> dict:
        """What the player shows for a trace: drawn in a render worker under a budget, once per
        (id, expanded stacks). A trace that cannot be drawn within the budget gets its steps
        in words instead (`undrawn`). Raises RenderBusy when every worker is taken."""
        expand = tuple(sorted(set(expand)))
        try:
            return await self.cache.get(
                (ident, expand), lambda: self.pool.page(trace, ident, expand)
            )
        except TooLargeToDraw as failure:
            log.warning("trace %s was not drawn: %s", ident, failure.reason)
            reason = failure.reason
        try:
            steps = await self.cache.get((ident, "words"), lambda: self.pool.narration(trace))
        except TooLargeToDraw:
            steps = []
        return {
            "code": trace["code"],
            "ident": ident,
            "lines": trace["code"].splitlines(),
            "undrawn": {"reason": f"This trace could not be drawn: {reason}.", "steps": steps},
        }

    async def quiz(self, ident: str, trace: dict, questions: list[dict] | None = None):
        """Quick checks for a trace (app.lessons.quiz.context), worked out in a render worker
        and kept with its pages: a lesson's `questions`, or the generated ones. A trace too
        large to quiz gets none, and says why (`unavailable`)."""
        asked = "" if questions is None else content_digest(json.dumps(questions, sort_keys=True))
        try:
            return await self.cache.get(
                (ident, "quiz", asked), lambda: self.pool.quiz(trace, questions)
            )
        except TooLargeToDraw as failure:
            log.warning("trace %s was not quizzed: %s", ident, failure.reason)
            return {"questions": [], "picks": {}, "unavailable": failure.reason}

    async def export(self, ident: str, trace: dict, request: ExportRequest, live_url: str | None):
        """A file of the trace (app.export), drawn in a render worker under the export budget
        and kept with its pages: {"data": base64} or {"bad_option": ...} or {"unavailable":
        ...}. Raises TooLargeToDraw when it cannot be drawn in time, RenderBusy when every
        worker is taken."""
        fields = dataclasses.asdict(request)
        key = (ident, "export", *fields.values(), live_url)
        return await self.cache.get(key, lambda: self.pool.export(trace, ident, fields, live_url))

    async def picture(self, ident: str, trace: dict, kind: str, view: str, theme: str, step):
        """One step as a picture (app.export.make.picture), answered as `export` is."""
        request = {"kind": kind, "view": view, "theme": theme, "step": step}
        key = (ident, "picture", kind, view, theme, step)
        return await self.cache.get(key, lambda: self.pool.picture(trace, request))


def content_digest(text: str) -> str:
    """A short digest of a stored trace's text (blake2b: about 1 GB/s, so a 4 MB trace's costs
    a few milliseconds)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
