"""One task as a handler sees it."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Dict, Optional


@dataclass
class Task:
    """A claimed row: its id, the claim it came with, and the fields of its ready message.

    ``id`` is the row id as text (invalid UTF-8 replaced); ``raw_id`` holds its exact bytes.
    ``fields`` are the ``name=value`` fields the dispatcher sent after the token (values
    percent-decoded; a field sent as a bare ``name`` is SQL NULL, ``None`` here).
    ``cancelled`` is set when the task's deadline passed and it was reported as a retry:
    a long handler may poll it and give up early (its outcome is discarded by then).
    """

    id: str
    token: str
    attempt: int
    fields: Dict[str, Optional[str]] = field(default_factory=dict)
    raw_id: bytes = b""
    message: str = ""
    """The ready message exactly as found in Redis (what the report removes)."""
    cancelled: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)
