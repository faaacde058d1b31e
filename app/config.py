"""The app's settings, read once from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    db_path: Path
    max_source_bytes: int = 20_000

    @classmethod
    def from_environment(cls) -> Settings:
        return cls(db_path=Path(os.environ.get("GRADTRACE_DB", ROOT / "data" / "gradtrace.db")))
