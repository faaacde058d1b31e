"""Each client's share of the work a request can start (app/shares.py), and that nothing is read
from the store before a request has its place."""

from __future__ import annotations

import asyncio

import pytest

from app.config import Settings
from app.export.options import ExportRequest
from app.page_cache import PageCache
from app.render_pool import RenderSettings
from app.sandbox import Requester
from app.service import Traces
from app.shares import Shares, ShareUsed
from app.store import Store
from engine.tracer import trace_snippet


def test_a_session_and_its_address_each_have_a_share():
    shares = Shares(per_session=1, per_address=2, what="pages being drawn", retry_after=2)
    with shares.hold(Requester("a", "10.0.0.1")):
        with pytest.raises(ShareUsed) as refused, shares.hold(Requester("a", "10.0.0.1")):
            pass
        assert refused.value.status_code == 429 and "pages being drawn" in refused.value.message
        with shares.hold(Requester("b", "10.0.0.1")):  # a classmate has a share of its own
            # but the address's is taken
            with pytest.raises(ShareUsed), shares.hold(Requester("minted", "10.0.0.1")):
                pass
            with shares.hold(Requester("c", "10.0.0.2")):
                assert shares.held() == 3
    assert shares.held() == 0


class _SlowPool:
    """A render pool whose work waits until released, counting what it was sent."""

    def __init__(self) -> None:
        self.settings = RenderSettings(session_renders=1, address_renders=2, session_exports=1)
        self.release = asyncio.Event()
        self.sent = []

    async def page(self, trace, ident, expand=()):
        self.sent.append(("page", ident))
        await self.release.wait()
        return {"ident": ident, "openable": [], "trace": {}}

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
    traces = Traces(store, Settings(db_path=tmp_path / "t.db"), _SlowPool(), PageCache())
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
