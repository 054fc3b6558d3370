"""The Redis node that serves a queue's keys, as a plain redis-py client (no retries of its
own), for each of the three address shapes.

Every command goes to that one node's client. redis-py's ``RedisCluster`` is used only for the
slot map: its own command path resends a command after a broken connection, and a resent
fetch could move a second task while the first one's reply was lost unseen. An error that
says the node no longer serves the queue counts as a broken connection: the next command
asks the sentinels or the cluster again (docs/operations.md "Where is the queue's Redis")."""

from __future__ import annotations

import threading
from typing import Any, Dict, Optional

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ReadOnlyError, TimeoutError as RedisTimeoutError
from redis.sentinel import Sentinel

from ..redis_address import RedisAddress

_NODE_GONE = ("MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "READONLY", "MASTERDOWN", "UNBLOCKED",
              "LOADING")


def is_broken(error: BaseException) -> bool:
    """A broken connection, or an answer saying the node no longer serves the queue."""
    if isinstance(error, (RedisConnectionError, RedisTimeoutError, ReadOnlyError)):
        return True
    name = type(error).__name__
    if name in ("MovedError", "AskError", "TryAgainError", "ClusterDownError",
                "MasterDownError", "SlotNotCoveredError"):
        return True
    return isinstance(error, RedisError) and str(error).startswith(_NODE_GONE)


def client_options(address: RedisAddress, socket_timeout: float) -> Dict[str, Any]:
    """Connection settings for Redis itself (not for sentinels)."""
    options: Dict[str, Any] = {
        "socket_connect_timeout": address.connect_timeout,
        "socket_timeout": socket_timeout,
        # Messages are ASCII by the protocol; a malformed one must still round-trip verbatim
        # (to the bad list), whatever bytes it holds.
        "decode_responses": True,
        "encoding_errors": "surrogateescape",
    }
    if address.user:
        options["username"] = address.user
    if address.password:
        options["password"] = address.password
    return options


class Route:
    """The client for the node of ``key`` (any key of the queue: they share one slot)."""

    def __init__(self, address: RedisAddress, key: str, socket_timeout: float) -> None:
        self._address = address
        self._key = key
        self._options = client_options(address, socket_timeout)
        self._lock = threading.Lock()
        self._single: Optional[redis.Redis] = None
        self._sentinel: Optional[Sentinel] = None
        self._cluster: Optional[RedisCluster] = None
        self._stale = False

    def client(self) -> redis.Redis:
        """The client for the queue's node; raises a redis ConnectionError if it cannot be
        found (no sentinel or cluster node answers)."""
        with self._lock:
            if self._address.sentinels:
                return self._sentinel_client()
            if self._address.cluster:
                return self._cluster_client()
            if self._single is None:
                self._single = redis.Redis(
                    host=self._address.host, port=self._address.port, **self._options
                )
            return self._single

    def _sentinel_client(self) -> redis.Redis:
        if self._single is None:
            timeouts = {k: v for k, v in self._options.items() if k.startswith("socket_")}
            self._sentinel = Sentinel(self._address.sentinel_endpoints(), **timeouts)
            self._single = self._sentinel.master_for(self._address.master, **self._options)
        return self._single

    def _cluster_client(self) -> redis.Redis:
        try:
            if self._cluster is None:
                nodes = [ClusterNode(h, p) for h, p in self._address.cluster_endpoints()]
                self._cluster = RedisCluster(startup_nodes=nodes, **self._options)
                self._stale = False
            elif self._stale:
                self._cluster.nodes_manager.initialize()
                self._stale = False
            node = self._cluster.get_node_from_key(self._key)
            return self._cluster.get_redis_connection(node)
        except RedisError:
            self._stale = True
            raise
        except Exception as e:  # RedisClusterException is not a RedisError
            self._stale = True
            raise RedisConnectionError(f"cluster {self._address.cluster}: {e}") from e

    def broken(self, error: BaseException) -> None:
        """Called after a command failed with ``error``: a broken connection, or a node that
        no longer serves the queue, makes the next command look for the node again."""
        if not is_broken(error):
            return
        with self._lock:
            self._stale = True
            if self._address.sentinels and self._single is not None:
                # A demoted master answers READONLY or UNBLOCKED: drop its connections, so the
                # next ones ask the sentinels where the master is now.
                self._single.connection_pool.disconnect(inuse_connections=False)

    def node(self) -> str:
        """``host:port`` of the node serving the queue now."""
        if self._address.sentinels:
            self.client()
            assert self._sentinel is not None
            host, port = self._sentinel.discover_master(self._address.master)
            return f"{host}:{port}"
        if self._address.cluster:
            self.client()
            assert self._cluster is not None
            return str(self._cluster.get_node_from_key(self._key).name)
        return f"{self._address.host}:{self._address.port}"

    def run(self, command: Any) -> Any:
        """``command(client)``, marking the route broken when it fails that way."""
        try:
            return command(self.client())
        except RedisError as e:
            self.broken(e)
            raise

    def close(self) -> None:
        with self._lock:
            if self._single is not None:
                self._single.close()
            if self._cluster is not None:
                self._cluster.close()
            self._single = self._cluster = self._sentinel = None
