"""A classroom under attack (issue 21's acceptance test).

Thirty honest browsers behind one address, each with its own cookie, press Run three times,
while one client behind the same address mints cookies and queues endless runs under them,
floods links to made-up stacks, trickles bodies and asks for big exports it hangs up on. Every
honest browser must get its trace and its page, `/healthz` must answer within a second
throughout, and the server's memory must stay bounded.

It runs against a real `gradtrace serve` on a loopback port. Everything connects from
127.0.0.1, so every client here is "one address", as a classroom behind one NAT address is.
The attack is paced (a few hundred requests a second in all, not as fast as the test process
can go) so that what is measured is the server's policies, not a race for the two cores the
test and the server share.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import resource
import select
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from app.config import LimitsSettings
from tests.live_server import free_port, serving

ROOT = Path(__file__).resolve().parents[2]

# ***** the classroom *****
BROWSERS = 30
PRESSES = 3
READING_SECONDS = 3.0  # a student reads the lesson before pressing Run; a new session may have
# to earn its place before it counts as a client of its own
PRESS_DEADLINE = 60.0  # from pressing Run to the page shown, retries after Retry-After included
# the whole lesson, after which presses still waiting are failures (keeps a failing run short)
CLASS_DEADLINE = 80.0

# ***** the attacker *****
RUNNERS = 24  # threads posting endless runs...
NEWEST_COOKIES = 3  # ...each under one of the newest minted cookies: ~8 at once per cookie
MINT_EVERY = 0.25  # seconds between cookieless GET / (each answer's cookie is kept)
FLOODERS = 2  # threads sending links to made-up stacks and hanging up
FLOOD_PAUSE = 0.01  # seconds between two of one flooder's connections (~100 a second each)
TRICKLES = 100  # connections sending a body a byte at a time
TRICKLE_LENGTH = 100_000  # the Content-Length they declare
TRICKLE_EVERY = 3.0  # seconds between two bytes of one trickle (within the body idle limit)
EXPORTERS = 2  # threads asking for big exports
EXPORT_HANG_UP = 1.0  # seconds an exporter waits for an answer before it hangs up
# long enough for the trickles to meet the body deadline (and be cut) while everyone watches
ATTACK_MIN_SECONDS = LimitsSettings().body_deadline_seconds + 10.0

# ***** what is watched *****
PROBE_EVERY = 0.5
PROBE_TIMEOUT = 1.0  # seconds, for the whole probe: connect, ask, read the answer
SAMPLE_EVERY = 0.5
# The server process's own resident memory (its sandbox zygote and render workers are apart,
# each under its own limit). Measured on a 2-core machine with this attack running: peaks of
# 135 to 195 MiB (about 105 MiB with no attack); with them, 300 to 650 MiB. 600 MiB leaves room
# for the caches at their caps (pages 64 MiB) and what is in flight, and still catches anything
# that grows with the attack. The test records the peaks it saw (junit properties).
RSS_BOUND_MIB = 600

# a scalar recurrence: 1,000 steps of three operations, then their backward: ~6,000 events
BIG = """import torch
h = torch.tensor(0.5, requires_grad=True)
w = torch.tensor(0.9, requires_grad=True)
b = torch.tensor(0.1, requires_grad=True)
x = h
for step in range(1000):
    x = torch.tanh(x * w + b)
x.backward()
print(w.grad)
"""
BIG_EVENTS = 5_000  # at least
EXPORT_FRAMES = 240  # app/export/options.py MAX_FRAMES: the largest range an image export draws


def _snippet(browser: int, press: int) -> str:
    return (
        "import torch\n"
        f"x = torch.tensor({browser}.0, requires_grad=True)\n"
        "(x * x).backward()\n"
        f"print({press})\n"
    )


# ***** records *****


@dataclass
class Attempt:
    what: str  # "POST /run", "GET /t/abc"
    status: int | str  # the HTTP status, or the error's name
    seconds: float

    def __str__(self) -> str:
        return f"{self.what} -> {self.status} in {self.seconds:.2f} s"


@dataclass
class Press:
    browser: int
    press: int
    ok: bool = False
    problem: str = "not reached"
    ident: str | None = None
    seconds: float | None = None  # from pressing Run to the page, when ok
    attempts: list[Attempt] = field(default_factory=list)

    def describe(self) -> str:
        tried = "; ".join(map(str, self.attempts[-6:]))
        more = f" (last 6 of {len(self.attempts)})" if len(self.attempts) > 6 else ""
        return f"browser {self.browser} press {self.press}: {self.problem}; tried{more}: {tried}"


class Tally:
    """Counts by name, from many threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.counts[name] = self.counts.get(name, 0) + n

    def __getitem__(self, name: str) -> int:
        return self.counts.get(name, 0)

    def __str__(self) -> str:
        return ", ".join(f"{name} {count}" for name, count in sorted(self.counts.items()))


# ***** raw HTTP, for the clients that misbehave and the probe *****


def _connect(port: int, timeout: float) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def _request(method: str, path: str, *headers: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *headers, "", ""]
    return "\r\n".join(lines).encode()


def _status(answer: bytes) -> int | str:
    match = re.match(rb"HTTP/1\.1 (\d{3}) ", answer)
    return int(match.group(1)) if match else ("closed" if not answer else "garbled")


def _answer_within(sock: socket.socket, seconds: float) -> tuple[bytes, str]:
    """What the server sends within `seconds`, and how that ended: "whole" (an answer and all
    its Content-Length), "closed" (by the server, or reset) or "no answer" (the time is up)."""
    deadline = time.monotonic() + seconds
    received = b""
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except OSError:  # reset
            return received, "closed"
        if not chunk:
            return received, "closed"
        received += chunk
        head, separator, body = received.partition(b"\r\n\r\n")
        length = re.search(rb"(?im)^content-length: *(\d+)", head)
        if separator and length and len(body) >= int(length.group(1)):
            return received, "whole"
    return received, "no answer"


# ***** the server *****


def _rss_kib(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:  # gone
        return 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0  # a zombie


def _children(pid: int) -> list[int]:
    found = []
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            found += [int(child) for child in listing.read_text().split()]
    return found


class Watch:
    """The health prober and the memory sampler, each in a thread, until `stop` is set."""

    def __init__(self, port: int, pid: int, stop: threading.Event) -> None:
        self.port, self.pid, self.stop = port, pid, stop
        self.started = time.monotonic()
        self.probes: list[tuple[float, int | str, float]] = []  # (when, status, seconds)
        self.server_peak_kib = 0
        self.server_peak_at = 0.0
        self.family_peak_kib = 0  # the server and its children (sandbox zygote, render workers)
        self.samples = 0

    def probe(self) -> None:
        tick = time.monotonic()
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                with _connect(self.port, PROBE_TIMEOUT) as sock:
                    sock.sendall(_request("GET", "/healthz", "Connection: close"))
                    left = PROBE_TIMEOUT - (time.monotonic() - began)
                    answer, ending = _answer_within(sock, max(left, 0.0))
                    status = _status(answer) if ending == "whole" else ending
            except OSError as error:
                status = type(error).__name__
            self.probes.append((began - self.started, status, time.monotonic() - began))
            tick = max(tick + PROBE_EVERY, time.monotonic())
            self.stop.wait(max(0.0, tick - time.monotonic()))

    def sample(self) -> None:
        while not self.stop.is_set():
            server = _rss_kib(self.pid)
            family = server + sum(_rss_kib(child) for child in _children(self.pid))
            if server > self.server_peak_kib:
                self.server_peak_kib = server
                self.server_peak_at = time.monotonic() - self.started
            self.family_peak_kib = max(self.family_peak_kib, family)
            self.samples += 1
            self.stop.wait(SAMPLE_EVERY)

    def failed_probes(self) -> list[tuple[float, int | str, float]]:
        return [
            (when, status, seconds)
            for when, status, seconds in self.probes
            if status != 200 or seconds > PROBE_TIMEOUT
        ]


CRASHES: list[str] = []  # any of this test's threads that failed (a fault of the test)


def _thread(job, *args) -> threading.Thread:
    """A daemon thread running `job`, whose exception, if any, is kept in CRASHES."""

    def guarded() -> None:
        try:
            job(*args)
        except Exception as error:
            CRASHES.append(f"{job.__name__}: {type(error).__name__}: {error}")
            raise

    return threading.Thread(target=guarded, daemon=True, name=job.__name__)


# ***** the attacker *****


class Attacker:
    """One client behind the classroom's address, doing four things at once until `stop`."""

    def __init__(self, url: str, port: int, big: str, stop: threading.Event) -> None:
        self.url, self.port, self.big, self.stop = url, port, big, stop
        self.minted: list[str] = []
        self.mints = Tally()  # cookieless GET /: given a cookie or not
        self.runs = Tally()  # endless runs: answers by status (and "cut" for a timed-out run)
        self.floods = Tally()
        self.trickles = Tally()
        self.exports = Tally()

    def threads(self) -> list[threading.Thread]:
        jobs = [self.mint, self.trickle]
        jobs += [self.run] * RUNNERS + [self.flood] * FLOODERS + [self.export] * EXPORTERS
        return [_thread(job) for job in jobs]

    # 1. cookies minted, and endless runs queued under each
    def mint(self) -> None:
        with httpx.Client(base_url=self.url, timeout=5) as client:
            while not self.stop.is_set():
                client.cookies.clear()
                try:
                    cookie = client.get("/").cookies.get("gradtrace_session")
                except httpx.HTTPError as error:
                    self.mints.add(type(error).__name__)
                else:
                    self.mints.add("cookie" if cookie else "no cookie")
                    if cookie:
                        self.minted.append(cookie)
                self.stop.wait(MINT_EVERY)

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=10) as client:
            while not self.stop.is_set():
                client.cookies.clear()
                # with no cookie minted yet (or ever), as the address
                cookie = random.choice(self.minted[-NEWEST_COOKIES:] or [""])
                code = f"while True:\n    pass  # {uuid.uuid4().hex}\n"
                headers = {"Cookie": f"gradtrace_session={cookie}"} if cookie else {}
                try:
                    answer = client.post("/api/traces", json={"code": code}, headers=headers)
                except httpx.HTTPError as error:
                    self.runs.add(type(error).__name__)
                    self.stop.wait(0.1)
                    continue
                self.runs.add(str(answer.status_code))
                if answer.status_code == 200:
                    outcome = answer.json()["trace"]["outcome"]
                    if outcome.get("status") != "ok":
                        self.runs.add("cut")
                else:  # an attacker does not wait for Retry-After; but it does not spin
                    self.stop.wait(0.1)

    # 2. links to made-up stacks, each connection closed as soon as the request is sent
    def flood(self) -> None:
        while not self.stop.is_set():
            stacks = ",".join(f"g{random.randrange(1_000_000)}" for _ in range(2))
            try:
                with _connect(self.port, 5) as sock:
                    sock.sendall(_request("GET", f"/t/{self.big}?expand={stacks}"))
                self.floods.add("sent")
            except OSError as error:
                self.floods.add(type(error).__name__)
            self.stop.wait(FLOOD_PAUSE)

    # 3. bodies a byte at a time, each connection replaced when the server ends it
    def trickle(self) -> None:
        head = _request(
            "POST",
            "/run",
            "Content-Type: application/x-www-form-urlencoded",
            f"Content-Length: {TRICKLE_LENGTH}",
        )
        due: dict[socket.socket, float] = {}  # each open trickle, and when its next byte is due

        def open_one() -> None:
            try:
                sock = _connect(self.port, 5)
                sock.sendall(head)
            except OSError as error:
                self.trickles.add(f"open: {type(error).__name__}")
                return
            sock.setblocking(False)
            due[sock] = time.monotonic() + random.uniform(0, TRICKLE_EVERY)
            self.trickles.add("opened")

        def end(sock: socket.socket, how: str) -> None:
            self.trickles.add(how)
            del due[sock]
            sock.close()

        try:
            while not self.stop.is_set():
                while len(due) < TRICKLES and not self.stop.is_set():
                    open_one()
                    if len(due) < TRICKLES and self.trickles["opened"] % 20 == 0:
                        break  # let the bytes already due go out while the rest open
                if not due:
                    self.stop.wait(0.5)
                    continue
                readable = select.select(list(due), [], [], 0.2)[0]
                for sock in readable:
                    try:
                        answer = sock.recv(65536)
                    except BlockingIOError:
                        continue
                    except OSError:
                        answer = b""
                    end(sock, f"answered {_status(answer)}")
                now = time.monotonic()
                for sock, when in list(due.items()):
                    if when <= now:
                        try:
                            sock.send(b"x")
                            due[sock] = now + TRICKLE_EVERY
                            self.trickles.add("bytes")
                        except BlockingIOError:
                            pass
                        except OSError:
                            end(sock, "answered closed")
        finally:
            for sock in due:
                sock.close()

    # 4. big exports (a new range each time, so never one already made), hung up on after 1 s
    def export(self) -> None:
        while not self.stop.is_set():
            kind = random.choice(("gif", "pdf"))
            first = random.randrange(1, 5_000)
            path = f"/t/{self.big}/export.{kind}?from={first}&to={first + EXPORT_FRAMES - 1}"
            try:
                with _connect(self.port, 5) as sock:
                    sock.sendall(_request("GET", path))
                    answer, ending = _answer_within(sock, EXPORT_HANG_UP)
                if answer:
                    self.exports.add(f"answered {_status(answer)}")
                else:
                    self.exports.add("hung up" if ending == "no answer" else ending)
            except OSError as error:
                self.exports.add(type(error).__name__)
            self.stop.wait(0.1)

    def report(self) -> str:
        return (
            f"GET / for a cookie: {self.mints}; endless runs: {self.runs}; "
            f"made-up stacks: {self.floods}; trickles: {self.trickles}; exports: {self.exports}"
        )


# ***** an honest browser *****


def _until_served(
    client: httpx.Client, press: Press, deadline: float, method: str, path: str, **options
) -> httpx.Response | None:
    """Ask until answered other than 429/503, as a user would: after Retry-After, or a second
    after a connection that failed. None if the deadline passes first."""
    while (left := deadline - time.monotonic()) > 0:
        began = time.monotonic()
        try:
            answer = client.request(method, path, timeout=left, **options)
        except httpx.HTTPError as error:
            press.attempts.append(Attempt(f"{method} {path}", type(error).__name__, _since(began)))
            wait = 1.0
        else:
            press.attempts.append(Attempt(f"{method} {path}", answer.status_code, _since(began)))
            if answer.status_code not in (429, 503):
                return answer
            retry_after = answer.headers.get("retry-after", "1")
            wait = float(retry_after) if retry_after.isdigit() else 1.0
        time.sleep(max(0.0, min(wait, deadline - time.monotonic())))
    return None


def _since(began: float) -> float:
    return time.monotonic() - began


def _browser(
    url: str, browser: int, presses: list[Press], class_ends: float, cookieless: list[int]
) -> None:
    with httpx.Client(base_url=url) as client:
        arrival = presses[0]
        home = _until_served(client, arrival, min(time.monotonic() + 30, class_ends), "GET", "/")
        if home is None or home.status_code != 200:
            arrival.problem = "the lesson page never came"
            return
        if not client.cookies.get("gradtrace_session"):
            cookieless.append(browser)  # a failure; it presses Run all the same, as anyone would
        time.sleep(READING_SECONDS)
        for press in presses:
            _press(client, browser, press, class_ends)
            if not press.ok:
                return  # a student whose Run never came back does not press again


def _press(client: httpx.Client, browser: int, press: Press, class_ends: float) -> None:
    began = time.monotonic()
    deadline = min(began + PRESS_DEADLINE, class_ends)
    ran = _until_served(
        client,
        press,
        deadline,
        "POST",
        "/run",
        data={"code": _snippet(browser, press.press)},
        headers={"HX-Request": "true"},
    )
    if ran is None:
        press.problem = "Run was refused or unanswered until the deadline"
        return
    pushed = ran.headers.get("hx-push-url", "")
    if ran.status_code != 200 or not pushed.startswith("/t/"):
        press.problem = f"Run answered {ran.status_code} (HX-Push-Url {pushed!r})"
        return
    press.ident = pushed.removeprefix("/t/")
    page = _until_served(client, press, deadline, "GET", pushed)
    if page is None:
        press.problem = "its page was refused or unanswered until the deadline"
        return
    if page.status_code != 200 or "<grad-player" not in page.text:
        undrawn = re.search(r"This trace could not be drawn: [^<]*", page.text)
        instead = f" ({undrawn.group()})" if undrawn else ""
        press.problem = f"its page answered {page.status_code} without a player{instead}"
        return
    press.ok, press.problem, press.seconds = True, "", time.monotonic() - began


# ***** the test *****


def _drain(stream, tail: list[bytes]) -> None:
    """Read the server's stderr as it comes (a full pipe would stop the server), keeping its
    last lines for the failure message."""
    for line in iter(stream.readline, b""):
        tail.append(line)
        del tail[:-20]


@pytest.mark.slow
@pytest.mark.alone
def test_a_classroom_under_attack_is_served(tmp_path, record_property):
    port = free_port()
    env = {name: value for name, value in os.environ.items() if not name.startswith("GRADTRACE_")}
    env.update(
        PYTHONPATH=str(ROOT),
        GRADTRACE_STORE_PATH=str(tmp_path / "traces.db"),
        # A classroom behind one NAT address needs many connections at once: thirty browsers,
        # each with a few, besides whatever else shares the address. Everything else is left
        # at its default.
        GRADTRACE_LIMITS_MAX_CONNECTIONS_PER_ADDRESS="400",
    )
    command = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    stop = threading.Event()
    threads: list[threading.Thread] = []
    CRASHES.clear()
    stderr_tail: list[bytes] = []
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    with serving(command, port, cwd=ROOT, env=env) as (process, url):
        threading.Thread(target=_drain, args=(process.stderr, stderr_tail), daemon=True).start()
        try:
            # the big trace the attacker asks pages and exports of
            stored = httpx.post(f"{url}/api/traces", json={"code": BIG}, timeout=60)
            assert stored.status_code == 200, stored.text[:500]
            big = stored.json()["id"]
            events = httpx.get(f"{url}/api/traces/{big}", timeout=30).json()["events"]
            assert len(events) >= BIG_EVENTS, f"the big trace has only {len(events)} events"

            watch = Watch(port, process.pid, stop)
            attacker = Attacker(url, port, big, stop)
            threads += [
                _thread(watch.probe),
                _thread(watch.sample),
                *attacker.threads(),
            ]
            for thread in threads:
                thread.start()
            attack_began = time.monotonic()
            time.sleep(2.0)  # the attack under way before the class arrives

            class_ends = time.monotonic() + CLASS_DEADLINE
            cookieless: list[int] = []  # the browsers GET / gave no session cookie
            presses = {
                browser: [Press(browser, press) for press in range(1, PRESSES + 1)]
                for browser in range(1, BROWSERS + 1)
            }
            browsers = [
                _thread(_browser, url, n, presses[n], class_ends, cookieless) for n in presses
            ]
            class_began = time.monotonic()
            for thread in browsers:
                thread.start()
                time.sleep(0.05)  # they arrive within a second and a half
            for thread in browsers:
                thread.join(timeout=max(0.0, class_ends - time.monotonic()) + 5)
            class_seconds = time.monotonic() - class_began
            # the attack goes on long enough for every part of it to meet its limit
            stop.wait(max(0.0, attack_began + ATTACK_MIN_SECONDS - time.monotonic()))
        finally:
            stop.set()
            _join(threads, 15)
    _join(threads, 5)  # the server is gone: any request still waiting has failed
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    running = [thread.name for thread in threads if thread.is_alive()]

    every = [press for browser in presses.values() for press in browser]
    done = [press for press in every if press.ok]
    failed = [press for press in every if not press.ok]
    latencies = sorted(press.seconds for press in done)
    probe_seconds = sorted(seconds for _, _, seconds in watch.probes)
    summary = {
        "class_seconds": round(class_seconds, 1),
        "presses_served": f"{len(done)}/{len(every)}",
        "press_seconds_median": _at(latencies, 0.5),
        "press_seconds_p95": _at(latencies, 0.95),
        "press_seconds_max": _at(latencies, 1.0),
        "honest_answers": _answers(every),
        "probes": len(watch.probes),
        "probe_seconds_median": _at(probe_seconds, 0.5),
        "probe_seconds_max": _at(probe_seconds, 1.0),
        "server_peak_rss_mib": round(watch.server_peak_kib / 1024, 1),
        "server_peak_rss_at_seconds": round(watch.server_peak_at, 1),
        "server_and_children_peak_rss_mib": round(watch.family_peak_kib / 1024, 1),
        "attack": attacker.report(),
        # the clients' own share of the two cores (all of this test process's threads)
        "test_process_cpu_seconds": round(
            cpu_after.ru_utime + cpu_after.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime, 1
        ),
    }
    for name, value in summary.items():
        record_property(name, value)
    report = "\n".join(f"  {name}: {value}" for name, value in summary.items())
    print(f"\nA classroom under attack:\n{report}")

    problems = []
    if failed:
        problems.append(
            f"{len(failed)} of {len(every)} honest presses did not get their trace and page:\n"
            + "\n".join("    " + press.describe() for press in failed[:15])
            + (f"\n    ... and {len(failed) - 15} more" if len(failed) > 15 else "")
        )
    if cookieless:
        problems.append(
            f"{len(cookieless)} of {BROWSERS} browsers were given no session cookie by GET /: "
            f"browsers {sorted(cookieless)}"
        )
    failed_probes = watch.failed_probes()
    if failed_probes or len(watch.probes) < 10:
        kinds = Tally()
        for _, status, _ in failed_probes:
            kinds.add(str(status))
        problems.append(
            f"{len(failed_probes)} of {len(watch.probes)} /healthz probes (every "
            f"{PROBE_EVERY:g} s from the attack's start) did not answer 200 within "
            f"{PROBE_TIMEOUT:g} s ({kinds}); the first of them:\n"
            + "\n".join(
                f"    at {when:.1f} s: {status} in {seconds:.2f} s"
                for when, status, seconds in failed_probes[:10]
            )
        )
    if watch.samples < 10 or watch.server_peak_kib > RSS_BOUND_MIB * 1024:
        problems.append(
            f"the server's peak RSS was {watch.server_peak_kib / 1024:.0f} MiB "
            f"(bound {RSS_BOUND_MIB} MiB; {watch.samples} samples)"
        )
    # the attack was running, and met its limits: each part, at least this many times
    answered = sum(n for how, n in attacker.trickles.counts.items() if how.startswith("answered"))
    met = {
        "endless runs refused or cut": (
            attacker.runs["429"] + attacker.runs["503"] + attacker.runs["cut"],
            1,
        ),
        "made-up stacks sent": (attacker.floods["sent"], 100),
        "trickles answered or closed by the server": (answered, 1),
        "exports asked and hung up on (or refused)": (sum(attacker.exports.counts.values()), 5),
    }
    short = [f"{name} ({count}, wanted {least})" for name, (count, least) in met.items()
             if count < least]  # fmt: skip
    if short:
        problems.append(f"the attack did not do what it should: {'; '.join(short)}")
    if running:
        problems.append(f"threads still running after the attack was stopped: {running}")
    if CRASHES:
        problems.append(f"threads of this test failed: {CRASHES}")
    tail = b"".join(stderr_tail).decode(errors="replace")
    assert not problems, (
        "\n".join(problems) + f"\nfigures:\n{report}\nthe server's last log lines:\n{tail}"
    )


def _answers(presses: list[Press]) -> str:
    """Every answer the honest browsers had, by request and status ("POST /run 429 12")."""
    answers = Tally()
    for press in presses:
        for attempt in press.attempts:
            what = "GET /t/{id}" if attempt.what.startswith("GET /t/") else attempt.what
            answers.add(f"{what} {attempt.status}")
    return str(answers)


def _join(threads: list[threading.Thread], seconds: float) -> None:
    """Wait for all of them, `seconds` at most in all."""
    deadline = time.monotonic() + seconds
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))


def _at(ordered: list[float], share: float) -> float | None:
    """The value at `share` of a sorted list (0.5 the median, 1.0 the largest)."""
    if not ordered:
        return None
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 2)
