"""Admission by session and address: a classroom behind one address is served, a flood is not."""

from __future__ import annotations

import contextlib

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
    # a has had a run: b and c, who have had none, go before its next two
    assert [t.client for t in order] == ["a", "b", "c", "a", "a"]


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


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_free_slot_goes_to_the_client_that_has_used_least_lately():
    clock = _Clock()
    admission = _classroom_admission(max_in_flight=1, clock=clock)
    started = []
    endless, student = Requester("endless", "10.0.0.1"), Requester("student", "10.0.0.1")
    for client, seconds in ((endless, 4.0), (student, 0.1)):
        admission.enter(client, started.append)
        clock.now += seconds
        admission.leave(started.pop())
    hold = admission.enter(Requester("someone", "10.0.0.2"), started.append)
    started.clear()
    for _ in range(3):  # the endless loop asks first, three times
        admission.enter(endless, started.append)
    admission.enter(student, started.append)
    admission.leave(hold)
    assert [ticket.client for ticket in started] == ["student"]
    # ten minutes on, what it used counts half: still more than the student's
    clock.now += 600
    admission.leave(started.pop())
    assert [ticket.client for ticket in started] == ["endless"]


def test_minted_sessions_give_their_places_to_a_classmate_with_fewer():
    admission = _classroom_admission(per_address_queue=200)
    refused = []
    minted = [Requester(f"minted-{n}", "10.0.0.1") for n in range(26)]
    for requester in minted:  # 26 x 10: the first four start, two hundred wait, then 429s
        for _ in range(10):
            with contextlib.suppress(SandboxBusy):
                admission.enter(requester, lambda ticket: None, refused.append)
    assert admission.stats()["queued"] == 200
    refused.clear()  # (the last minted sessions took some of the first ones' places)
    for n in range(30):  # a classroom's honest browsers, each pressing Run once
        admission.enter(Requester(f"student-{n}", "10.0.0.1"), lambda ticket: None, refused.append)
    assert admission.stats()["queued"] == 200
    assert len(refused) == 30 and all(error.status_code == 429 for error in refused)
    assert all("classmate" in error.message for error in refused)
    # a session with as many waiting as the most is not given anyone's place
    with pytest.raises(SandboxBusy) as refused_too:
        admission.enter(minted[0], lambda ticket: None, refused.append)
    assert refused_too.value.status_code == 429
