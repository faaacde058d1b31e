"""A class's server-sent events on real servers (app/class_events.py): an answer recorded
reaches the instructor's open stream, the pace and a reveal reach a student's, streams are
bounded per class and give their place back when their client goes; and with two servers on
one PostgreSQL, an answer recorded through one reaches a stream open on the other (LISTEN and
NOTIFY)."""

import contextlib
import json
import os
import re

import httpx

from tests.live_server import free_port, serving, uvicorn_command

LESSON, QUESTION = "define-by-run", "nodes-before-line-4"
TIMEOUT = httpx.Timeout(60.0)  # a hang guard: a stream that never says what it should fails


@contextlib.contextmanager
def _server(tmp_path, name: str, **env):
    port = free_port()
    env = {
        "GRADTRACE_STORE_PATH": str(tmp_path / f"{name}.db"),
        "GRADTRACE_SESSION_SECRET": "shared by the servers",
        **env,
    }
    with serving(uvicorn_command(port), port, env=dict(os.environ, **env)) as (_, url):
        yield url


def _start(url: str) -> tuple[str, str]:
    with httpx.Client(base_url=url, timeout=TIMEOUT) as instructor:
        answer = instructor.post("/classes", data={"lesson": LESSON}, follow_redirects=True)
        teach = answer.url.path
        code = re.search(r"data-join-code>(\w+)<", answer.text).group(1)
    return teach, code


def _student(url: str, code: str) -> httpx.Client:
    student = httpx.Client(base_url=url, timeout=TIMEOUT)
    student.post("/join", data={"code": code, "name": "Ann"})
    return student


def _events(stream: httpx.Response):
    """(kind, data) of each event a stream sends; a comment is ("", text)."""
    kind = ""
    for line in stream.iter_lines():
        if line.startswith(":"):
            yield "", line[1:].strip()
        elif line.startswith("event: "):
            kind = line[len("event: ") :]
        elif line.startswith("data: "):
            yield kind, json.loads(line[len("data: ") :])


def _next_event(events, wanted: str):
    for kind, data in events:
        if kind == wanted:
            return data
    raise AssertionError(f"the stream ended without a {wanted!r} event")


def test_an_answer_reaches_the_instructors_stream_and_the_pace_a_students(tmp_path):
    with _server(tmp_path, "one") as url:
        teach, code = _start(url)
        student = _student(url, code)
        class_id = teach.split("/")[2]
        with (
            httpx.Client(base_url=url, timeout=TIMEOUT) as instructor,
            instructor.stream("GET", f"{teach}/events") as stream,
            student.stream("GET", f"/classes/{class_id}/follow") as following,
        ):
            assert stream.headers["content-type"].startswith("text/event-stream")
            assert stream.headers["referrer-policy"] == "no-referrer"
            events, followed = _events(stream), _events(following)
            assert next(events) == ("", "connected")  # listening: what comes now arrives
            assert _next_event(followed, "pace") == {"step": None}  # the pace, first
            student.post(f"/lessons/{LESSON}/questions/{QUESTION}", data={"value": "1"})
            assert _next_event(events, "answers") == {"question": QUESTION}
            instructor.post(f"{teach}/pace", data={"step": "3"})
            assert _next_event(followed, "pace") == {"step": 3}
            instructor.post(f"{teach}/reveal", data={"question": QUESTION})
            assert _next_event(followed, "reveal") == {"question": QUESTION}
        student.close()


def test_instructor_streams_are_bounded_per_class_and_freed_when_their_client_goes(tmp_path):
    with _server(tmp_path, "bounded") as url:
        teach, _ = _start(url)
        with httpx.Client(base_url=url, timeout=TIMEOUT) as client:
            with contextlib.ExitStack() as opened:
                reading = []  # each stream's reader kept: a dropped one hangs up its stream
                for _ in range(8):
                    stream = opened.enter_context(client.stream("GET", f"{teach}/events"))
                    reading.append(_events(stream))
                    assert next(reading[-1]) == ("", "connected")
                with client.stream("GET", f"{teach}/events") as refused:
                    assert refused.status_code == 429
            # the eight clients went: their streams ended and gave their places back
            for _ in range(100):
                with client.stream("GET", f"{teach}/events") as stream:
                    if stream.status_code == 200:
                        break
            assert stream.status_code == 200
        with httpx.Client(base_url=url, timeout=TIMEOUT) as stranger:
            assert stranger.get(f"/classes/{teach.split('/')[2]}/follow").status_code == 404


def test_a_stopping_server_ends_its_streams_and_so_stops(tmp_path):
    with httpx.Client(timeout=TIMEOUT) as client, contextlib.ExitStack() as opened:
        with _server(tmp_path, "stopping") as url:  # stopped at the block's end: SIGTERM
            teach, _ = _start(url)
            stream = opened.enter_context(client.stream("GET", url + f"{teach}/events"))
            events = _events(stream)
            assert next(events) == ("", "connected")
        # serving() waited for the server to exit: the open stream did not hold it up, and
        # it ended cleanly, without saying the class ended (it goes on)
        assert list(events) == []


def test_an_answer_through_one_server_reaches_a_stream_on_another(tmp_path, postgres):
    database = postgres.new_database()
    with (
        _server(tmp_path, "a", GRADTRACE_STORE_DATABASE_URL=database) as one,
        _server(tmp_path, "b", GRADTRACE_STORE_DATABASE_URL=database) as other,
    ):
        teach, code = _start(one)
        student = _student(one, code)
        with (
            httpx.Client(base_url=other, timeout=TIMEOUT) as instructor,
            instructor.stream("GET", f"{teach}/events") as stream,
        ):
            events = _events(stream)
            assert next(events) == ("", "connected")
            student.post(f"/lessons/{LESSON}/questions/{QUESTION}", data={"value": "1"})
            assert _next_event(events, "answers") == {"question": QUESTION}
            joined = _student(one, code)
            assert _next_event(events, "members") == {"members": 2}
            joined.close()
        student.close()
