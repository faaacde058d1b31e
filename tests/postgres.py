"""A throwaway PostgreSQL cluster for the tests: initdb into a temporary folder, a server on a
Unix socket in that folder (no TCP port to collide on), one database per test.

Each pytest process (each xdist worker) starts its own cluster the first time a test asks for
one, and stops it at the session's end, so workers never share a server. The server runs
without fsync: a test's database does not outlive the test run. PostgreSQL refuses to run as
root, so as root the cluster runs as the `postgres` user (Debian's package makes it) and the
folder is theirs. `make test` installs Debian's postgresql as root when it is missing.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

INSTALL = (
    "PostgreSQL is needed for the store's tests and is not installed here: "
    "sudo apt-get install postgresql (make test does it when run as root)"
)


def _binaries() -> Path | None:
    """The folder of initdb and pg_ctl: on the PATH, or where Debian's package keeps them."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    return Path(versions[-1]).parent if versions else None


def _version(path: str) -> int:
    number = Path(path).parent.parent.name
    return int(number) if number.isdigit() else 0


class Cluster:
    def __init__(self, fsync: bool = False) -> None:
        """A new cluster; without `fsync` (the tests) a crash of the machine may lose what it
        held, which a test's database need not survive (bench/store.py syncs, as in use)."""
        binaries = _binaries()
        if binaries is None:
            raise RuntimeError(INSTALL)
        self._bin = binaries
        self._as_root = os.geteuid() == 0
        self.folder = Path(tempfile.mkdtemp(prefix="gradtrace-pg-"))
        self._names = itertools.count()
        if self._as_root:
            shutil.chown(self.folder, "postgres", "postgres")
        self._data = self.folder / "data"
        self._run("initdb", "-D", str(self._data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        self._run(
            "pg_ctl", "start", "-w", "-D", str(self._data), "-l", str(self.folder / "log"),
            "-o", f"-k {self.folder} -c listen_addresses='' {'' if fsync else '-F'} "
                  "-c max_connections=200",
        )  # fmt: skip

    def _run(self, program: str, *args: str) -> None:
        command = [str(self._bin / program), *args]
        if self._as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, cwd=self.folder)
        if result.returncode != 0:
            raise RuntimeError(f"{program} failed: {result.stderr or result.stdout}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.folder}"

    def new_database(self) -> str:
        """The URL of a new, empty database."""
        import psycopg

        name = f"test_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "stop", "-D", str(self._data), "-m", "immediate")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
