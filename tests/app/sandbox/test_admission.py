"""Admission by session and address: a classroom behind one address is served, a flood is not."""

from __future__ import annotations

import pytest

from app.sandbox import Requester, SandboxBusy
from app.sandbox.admission import Admission


def _classroom_admission(**overrides) -> Admission:
    limits = dict(
        max_in_flight=4,
        max_queue=256,
        per_client_in_flight=2,
        per_client_queue=8,
        per_address_queue=200,
        typical_seconds=1.0,
    )
    limits.update(overrides)
    return Admission(**limits)


def test_thirty_sessions_behind_one_address_are_all_admitted():
    admission = _classroom_admission()
    started = []
    tickets = [
        admission.enter(Requester(f"student-{n}", "10.0.0.1"), started.append)
        for n in range(30)
        for _ in range(3)  # each student presses Run three times
    ]
    assert len(tickets) == 90 and len(started) == 4
    assert admission.stats() == {"in_flight": 4, "queued": 86}
    while started:
        admission.leave(started.pop(0))
    assert admission.stats() == {"in_flight": 0, "queued": 0}


def test_waiting_runs_are_shared_out_session_by_session():
    admission = _classroom_admission(max_in_flight=1)
    order = []
    for session in ("a", "a", "a", "b", "c"):
        admission.enter(Requester(session, "10.0.0.1"), lambda t, s=session: order.append(t))
    while len(order) < 5:
        admission.leave(order[len(order) - 1])
    assert [t.client for t in order] == ["a", "a", "b", "c", "a"]


def test_one_session_is_limited_to_its_own_share():
    admission = _classroom_admission()
    greedy = Requester("greedy", "10.0.0.1")
    for _ in range(2 + 8):
        admission.enter(greedy, lambda ticket: None)
    with pytest.raises(SandboxBusy) as refused:
        admission.enter(greedy, lambda ticket: None)
    assert refused.value.status_code == 429
    admission.enter(Requester("classmate", "10.0.0.1"), lambda ticket: None)  # still served


def test_minted_sessions_of_one_address_share_its_waiting_cap():
    admission = _classroom_admission(per_address_queue=20)
    for n in range(4 + 20):  # four start, twenty wait
        admission.enter(Requester(f"minted-{n}", "10.6.6.6"), lambda ticket: None)
    with pytest.raises(SandboxBusy) as refused:
        admission.enter(Requester("minted-again", "10.6.6.6"), lambda ticket: None)
    assert refused.value.status_code == 429
    assert "address" in refused.value.message
    admission.enter(Requester("someone-else", "10.0.0.2"), lambda ticket: None)


def test_a_waiting_run_that_starts_or_is_cancelled_frees_its_address_share():
    admission = _classroom_admission(max_in_flight=1, per_address_queue=2)
    first = admission.enter(Requester("s1", "10.0.0.1"), lambda ticket: None)
    waiting = admission.enter(Requester("s2", "10.0.0.1"), lambda ticket: None)
    admission.enter(Requester("s3", "10.0.0.1"), lambda ticket: None)
    with pytest.raises(SandboxBusy):
        admission.enter(Requester("s4", "10.0.0.1"), lambda ticket: None)
    assert admission.cancel(waiting)
    admission.enter(Requester("s4", "10.0.0.1"), lambda ticket: None)
    admission.leave(first)  # s3 starts: one more may wait
    admission.enter(Requester("s5", "10.0.0.1"), lambda ticket: None)


def test_a_plain_string_client_is_its_own_address():
    admission = _classroom_admission(max_in_flight=1, per_address_queue=1)
    admission.enter("cli", lambda ticket: None)
    admission.enter("cli", lambda ticket: None)
    with pytest.raises(SandboxBusy):
        admission.enter("cli", lambda ticket: None)
