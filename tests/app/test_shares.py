"""Each client's share of the work a request can start (app/shares.py), and that nothing is read
from the store before a request has its place."""

from __future__ import annotations

import asyncio

import pytest

from app.config import Settings, StoreSettings
from app.export.options import ExportRequest
from app.page_cache import PageCache
from app.render_pool import RenderSettings
from app.sandbox import Requester
from app.service import Traces
from app.shares import Shares, ShareUsed
from app.store import Store
from engine.tracer import trace_snippet


def test_a_session_is_refused_past_its_share_and_an_address_waits_its_turn():
    shares = Shares(
        per_session=1, per_address=2, what="pages being drawn", retry_after=2, wait_seconds=0.3
    )
    order = []

    async def draw(requester: Requester, seconds: float) -> None:
        async with shares.hold(requester):
            order.append(requester.session)
            await asyncio.sleep(seconds)

    async def body():
        first = asyncio.ensure_future(draw(Requester("a", "10.0.0.1"), 0.1))
        await asyncio.sleep(0)
        with pytest.raises(ShareUsed) as refused:  # at once: this browser has one going
            await draw(Requester("a", "10.0.0.1"), 0)
        others = [asyncio.ensure_future(draw(Requester(name, "10.0.0.1"), 0.1)) for name in "bcd"]
        elsewhere = asyncio.ensure_future(draw(Requester("e", "10.0.0.2"), 0))
        await asyncio.gather(first, *others, elsewhere)
        assert shares.held() == 0
        with pytest.raises(ShareUsed) as waited_too_long:
            async with (
                shares.hold(Requester("x", "10.0.0.3")),
                shares.hold(Requester("y", "10.0.0.3")),
            ):
                await draw(Requester("z", "10.0.0.3"), 0)
        return refused.value, waited_too_long.value

    refused, waited_too_long = asyncio.run(body())
    assert refused.status_code == 429 and "pages being drawn" in refused.message
    assert waited_too_long.status_code == 429 and "network" in waited_too_long.message
    # the address's third and fourth waited their turn, in order; another address did not wait
    assert order == ["a", "b", "e", "c", "d"]


class _SlowPool:
    """A render pool whose work waits until released, counting what it was sent."""

    def __init__(self) -> None:
        self.settings = RenderSettings(session_renders=1, address_renders=2, session_exports=1)
        self.release = asyncio.Event()
        self.sent = []

    async def page(self, trace, ident, expand=()):
        self.sent.append(("page", ident))
        await self.release.wait()
        shown = {"code": "", "outcome": {}, "event_count": 0}
        return {
            "ident": ident,
            "openable": [],
            "trace": shown,
            "player_json": "{}",
            "steps_html": "",
            "drawings": {},
            "rendered": {},
        }

    async def export(self, trace, ident, request, live_url):
        self.sent.append(("export", ident))
        await self.release.wait()
        return {"data": ""}


@pytest.fixture
def service(tmp_path):
    store = Store(tmp_path / "traces.db")
    reads = []
    real_read = store.get_json

    def counted_read(ident):
        reads.append(ident)
        return real_read(ident)

    store.get_json = counted_read
    idents = [store.put(f"print({n})", trace_snippet(f"print({n})"))[0] for n in range(3)]
    traces = Traces(
        store, Settings(store=StoreSettings(path=tmp_path / "t.db")), _SlowPool(), PageCache()
    )
    return traces, idents, reads


def test_past_its_share_a_client_is_refused_before_anything_is_read(service):
    traces, (one, two, three), reads = service
    student = Requester("student", "10.0.0.1")

    async def body():
        first = asyncio.ensure_future(traces.page(one, student))
        await asyncio.sleep(0.05)
        with pytest.raises(ShareUsed):
            await traces.page(two, student)
        # a classmate draws another page meanwhile; the same page for anyone is no new work
        classmate = asyncio.ensure_future(traces.page(three, Requester("mate", "10.0.0.1")))
        same = asyncio.ensure_future(traces.page(one, Requester("x", "10.0.0.3")))
        await asyncio.sleep(0.05)
        traces.pool.release.set()
        await asyncio.gather(first, classmate, same)

    asyncio.run(body())
    assert sorted(reads) == sorted([one, three])  # `two` was never read
    assert sorted(traces.pool.sent) == sorted([("page", one), ("page", three)])


def test_a_client_makes_one_export_at_a_time(service):
    traces, (one, two, _), reads = service
    teacher, other = Requester("teacher", "10.0.0.1"), Requester("other", "10.0.0.2")
    gif, pdf = (
        ExportRequest.checked("gif", None, None, 1, 2),
        ExportRequest.checked("pdf", None, None, 1, 2),
    )

    async def body():
        first = asyncio.ensure_future(traces.export(one, teacher, gif, None))
        await asyncio.sleep(0.05)
        with pytest.raises(ShareUsed) as refused:
            await traces.export(two, teacher, pdf, None)
        elsewhere = asyncio.ensure_future(traces.export(two, other, pdf, None))
        await asyncio.sleep(0.05)
        traces.pool.release.set()
        return refused.value, await first, await elsewhere

    refused, first, elsewhere = asyncio.run(body())
    assert refused.status_code == 429 and "export" in refused.message
    assert first["reply"] == elsewhere["reply"] == {"data": ""}
    assert reads == [one, two]
