"""What a worker says about itself in its heartbeat key's value, for the dispatcher's workers
view (``rowpump status``, the dashboard): ``host=<h>;lang=python;version=<v>;done=<n>;ttl=<ms>``,
values percent-encoded. Display only; see common/include/rowpump/common/protocol/worker_info.hpp."""

from __future__ import annotations

import socket

from .messages import percent_encode

MAX_TEXT = 64


def format_worker_info(done: int, ttl_ms: int) -> str:
    from .. import __version__  # at call time: the package has finished importing

    fields = (("host", socket.gethostname()), ("lang", "python"), ("version", __version__),
              ("done", str(done)), ("ttl", str(ttl_ms)))
    return ";".join(f"{name}={percent_encode(value[:MAX_TEXT])}" for name, value in fields)
