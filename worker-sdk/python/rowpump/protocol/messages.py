"""The wire protocol's messages (common/src/messages.cpp): ready messages from the
dispatcher, done messages back to it. docs/protocol.md documents them."""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional, Tuple

from .duration import format_duration
from ..task import Task

MAX_MESSAGE_BYTES = 64 * 1024
"""The longest done message the dispatcher accepts."""

MAX_REASON_BYTES = 1000
"""A reason is cut to this many bytes (``rp_last_error`` holds 1024 characters)."""

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = "0123456789ABCDEF"
_TOKEN = re.compile(r"[0-9A-F]{16}-([1-9][0-9]{0,8})-[0-9A-F]+")
_VALUE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


class MalformedMessage(ValueError):
    """A ready message that does not follow the protocol; the text says what is wrong."""


def percent_encode(raw: "bytes | str") -> str:
    """Bytes outside ``[A-Za-z0-9-._~]`` become ``%XX`` (upper-case hex); str is UTF-8."""
    data = raw.encode("utf-8", "surrogateescape") if isinstance(raw, str) else raw
    out: List[str] = []
    for byte in data:
        if byte in _UNRESERVED:
            out.append(chr(byte))
        else:
            out.append("%" + _HEX[byte >> 4] + _HEX[byte & 15])
    return "".join(out)


def percent_decode(encoded: str) -> Optional[bytes]:
    """The bytes ``encoded`` stands for; ``None`` if it is not valid percent-encoding
    (a bad ``%`` escape, or a bare space, ``:`` or ``=``)."""
    out = bytearray()
    i, n = 0, len(encoded)
    while i < n:
        c = encoded[i]
        if c != "%":
            if c in " :=":
                return None
            out += c.encode("utf-8", "surrogateescape")
            i += 1
            continue
        pair = encoded[i + 1 : i + 3]
        if len(pair) != 2 or any(h not in "0123456789ABCDEFabcdef" for h in pair):
            return None
        out.append(int(pair, 16))
        i += 3
    return bytes(out)


def is_valid_token(token: str) -> bool:
    """``<16 upper-case hex>-<attempt>-<upper-case hex>``, at most 200 characters."""
    return len(token) <= 200 and _TOKEN.fullmatch(token) is not None


def is_valid_value_name(name: str) -> bool:
    """Names of success values: ``[A-Za-z_][A-Za-z0-9_]*``, at most 64 characters."""
    return _VALUE_NAME.fullmatch(name) is not None


def _parse_fields(parts: Iterable[str]) -> Dict[str, Optional[str]]:
    fields: Dict[str, Optional[str]] = {}
    for part in parts:
        name, eq, value = part.partition("=")
        if not name or "%" in name or ":" in name:
            raise MalformedMessage(f"invalid field '{part}'")
        if not eq:
            fields[name] = None  # SQL NULL
            continue
        decoded = percent_decode(value)
        if decoded is None:
            raise MalformedMessage(f"invalid percent-encoding in field '{name}'")
        fields[name] = decoded.decode("utf-8", "replace")
    return fields


def parse_ready(message: str) -> Task:
    """The task a ready message ``<id>:<token>[ <name>=<value>]...`` stands for.

    Raises ``MalformedMessage`` naming the problem.
    """
    head, *field_parts = message.split(" ")
    colon = head.rfind(":")
    if colon < 0:
        raise MalformedMessage("no ':' between id and token")
    raw_id = percent_decode(head[:colon])
    if not raw_id:
        raise MalformedMessage(f"invalid id '{head[:colon]}'")
    token = head[colon + 1 :]
    match = _TOKEN.fullmatch(token) if len(token) <= 200 else None
    if match is None:
        raise MalformedMessage(f"invalid token '{token}'")
    return Task(
        id=raw_id.decode("utf-8", "replace"),
        token=token,
        attempt=int(match.group(1)),
        fields=_parse_fields(field_parts),
        raw_id=raw_id,
        message=message,
    )


def ready_message(task: Task) -> str:
    """The ready message of ``task``: as received, or formatted for a task built by hand."""
    if task.message:
        return task.message
    return percent_encode(task.raw_id or task.id) + ":" + task.token


def done_head(task: Task) -> str:
    """``<id>:<token>``: what a done message starts with (the ready message's fields are not
    sent back; the dispatcher reads the task from the first word)."""
    return ready_message(task).split(" ", 1)[0]


def clip_reason(reason: str) -> str:
    """A reason as the dispatcher stores it: valid UTF-8, at most MAX_REASON_BYTES bytes,
    ending in ``...`` when cut (never in the middle of a character)."""
    data = reason.encode("utf-8", "replace")
    if len(data) <= MAX_REASON_BYTES:
        return data.decode("utf-8")
    return data[: MAX_REASON_BYTES - 3].decode("utf-8", "ignore") + "..."


def format_done(
    task: Task,
    verb: str,
    values: Iterable[Tuple[str, str]] = (),
    reason: str = "",
    delay_ms: Optional[int] = None,
    lease_ms: Optional[int] = None,
    handler_ms: Optional[int] = None,
) -> str:
    """``<id>:<token> <verb>[ <name>=<value>]...``, values percent-encoded; ``handler_ms``
    (how long the handler ran) goes into ``ms=`` for the dispatcher's handler histogram."""
    out = [done_head(task), " ", verb]

    def field(name: str, value: str) -> None:
        out.extend((" ", name, "=", percent_encode(value)))

    for name, value in values:
        field(name, value)
    if reason:
        field("reason", reason)
    if delay_ms is not None:
        field("delay", format_duration(delay_ms))
    if lease_ms is not None:
        field("lease", format_duration(lease_ms))
    if handler_ms is not None and verb != "extend":
        field("ms", str(max(0, int(handler_ms))))
    return "".join(out)
