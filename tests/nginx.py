"""Debian's nginx in front of test servers, configured by the block docs/deploying.md ships.

The deployment guide's configuration is the one tested: its ```nginx block under "Many servers
on one PostgreSQL" is read from the file, and only what must differ on a test machine is
changed (the listening address, no TLS, the servers' addresses). Each change must find exactly
what it replaces, so a guide that drifts from the shape this expects fails the test rather than
testing something else.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "deploying.md"
SECTION = "## Many servers on one PostgreSQL"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
START_TIMEOUT = 10.0


def guide_config() -> str:
    """The ```nginx block of the guide's many-servers section, as written there."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    return re.search(r"```nginx\n(.*?)```", section, re.S).group(1)


def for_test(config: str, port: int, upstreams: list[int]) -> str:
    """`config` listening on 127.0.0.1:`port` in plain HTTP, in front of `upstreams` (ports)."""
    config, listens = re.subn(r"listen 443 ssl;", f"listen 127.0.0.1:{port};", config)
    config, certs = re.subn(r"\n\s*# ssl_certificate[^\n]*", "", config)
    servers = re.findall(r"server 10\.0\.0\.\d+:8000", config)
    assert (listens, certs, len(servers)) == (1, 1, len(upstreams)), "the guide's block changed"
    for server, upstream in zip(servers, upstreams, strict=True):
        config = config.replace(server, f"server 127.0.0.1:{upstream}", 1)
    return config


@contextlib.contextmanager
def nginx_in_front(folder: Path, port: int, upstreams: list[int]) -> Iterator[str]:
    """nginx, run by this process (no system service), until the block ends; yields its URL."""
    if not Path(NGINX).exists():
        raise RuntimeError("nginx is missing: apt-get install nginx (make test does, as root)")
    folder.mkdir(parents=True, exist_ok=True)
    conf = folder / "nginx.conf"
    # as root nginx's workers would switch to nobody, who may not write the temp folders here
    user = "user root;" if os.geteuid() == 0 else ""
    temps = "\n".join(
        f"    {kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf.write_text(
        f"""{user}
daemon off;
worker_processes 1;
pid {folder / "nginx.pid"};
error_log {folder / "error.log"} info;
events {{ worker_connections 512; }}
http {{
    access_log {folder / "access.log"};
{temps}
{for_test(guide_config(), port, upstreams)}
}}
"""
    )
    process = subprocess.Popen(
        [NGINX, "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(conf)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_listening(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def _wait_listening(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        with contextlib.suppress(httpx.TransportError):
            httpx.get(f"{url}/healthz", timeout=5)
            return
        if process.poll() is not None:
            raise RuntimeError(f"nginx exited: {process.stderr.read().decode()}")
        if time.monotonic() > deadline:
            raise RuntimeError("nginx did not listen in time")
        time.sleep(0.05)
