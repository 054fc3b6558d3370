"""Where Redis is: one server, a Sentinel group or a Cluster (the same three shapes as the
dispatcher's ``redis:`` section and the C++ SDK's ``RedisAddress``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Sequence, Tuple, Union

Endpoint = Tuple[str, int]


def parse_endpoint(text: str) -> Endpoint:
    """``"host:port"`` (``"[::1]:26379"`` for IPv6) as ``(host, port)``."""
    host, colon, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"'{text}' is not host:port")
    return host, int(port)


def _endpoints(entries: Sequence[Union[str, Endpoint]]) -> List[Endpoint]:
    return [parse_endpoint(e) if isinstance(e, str) else (str(e[0]), int(e[1])) for e in entries]


@dataclass
class RedisAddress:
    """One of: ``host``/``port``; ``sentinels`` + ``master``; ``cluster`` (seed nodes).

    Endpoints are ``(host, port)`` tuples or ``"host:port"`` strings. ``password`` (and
    ``user`` for an ACL user) go to Redis, never to sentinels.
    """

    host: str = "127.0.0.1"
    port: int = 6379
    sentinels: List[Union[str, Endpoint]] = field(default_factory=list)
    master: str = ""
    cluster: List[Union[str, Endpoint]] = field(default_factory=list)
    user: str = ""
    password: str = ""
    connect_timeout: float = 2.0
    """Seconds to wait for a connection to open."""

    def sentinel_endpoints(self) -> List[Endpoint]:
        return _endpoints(self.sentinels)

    def cluster_endpoints(self) -> List[Endpoint]:
        return _endpoints(self.cluster)

    @property
    def replicated(self) -> bool:
        """Sentinel or Cluster: the queue's node may change under us (a failover)."""
        return bool(self.sentinels or self.cluster)

    def problem(self) -> str:
        """"" if the address is one of the three shapes, else what is wrong."""
        if self.sentinels and self.cluster:
            return "redis: sentinels and cluster exclude each other"
        if bool(self.sentinels) != bool(self.master):
            return "redis: sentinels and master go together"
        try:
            self.sentinel_endpoints()
            self.cluster_endpoints()
        except (ValueError, TypeError, IndexError) as e:
            return f"redis: {e}"
        if not self.replicated and not 0 < int(self.port) < 65536:
            return f"redis: port {self.port} is out of range"
        return ""

    def describe(self) -> str:
        if self.sentinels:
            return f"master '{self.master}' of sentinels {self.sentinels}"
        if self.cluster:
            return f"cluster {self.cluster}"
        return f"{self.host}:{self.port}"


def as_address(redis: "RedisAddress | str | None") -> RedisAddress:
    """``None`` is 127.0.0.1:6379; a string is ``"host:port"``."""
    if redis is None:
        return RedisAddress()
    if isinstance(redis, str):
        host, port = parse_endpoint(redis)
        return RedisAddress(host=host, port=port)
    return redis
