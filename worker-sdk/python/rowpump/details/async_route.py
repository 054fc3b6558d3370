"""The asyncio twin of ``route.py``: a plain ``redis.asyncio`` client for the node that
serves the queue's keys (one server, the master the sentinels name, or the cluster node
that owns the queue's slot)."""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Dict, Optional

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.sentinel import Sentinel
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from .route import client_options, is_broken
from ..redis_address import RedisAddress


class AsyncRoute:
    def __init__(self, address: RedisAddress, key: str, socket_timeout: float) -> None:
        self._address = address
        self._key = key
        self._options = client_options(address, socket_timeout)
        self._lock = asyncio.Lock()
        self._single: Optional[aioredis.Redis] = None
        self._sentinel: Optional[Sentinel] = None
        self._cluster: Optional[RedisCluster] = None
        self._nodes: Dict[str, aioredis.Redis] = {}
        self._stale = False

    async def client(self) -> aioredis.Redis:
        async with self._lock:
            if self._address.cluster:
                return await self._cluster_client()
            if self._single is None:
                if self._address.sentinels:
                    timeouts = {k: v for k, v in self._options.items() if k.startswith("socket_")}
                    self._sentinel = Sentinel(self._address.sentinel_endpoints(), **timeouts)
                    self._single = self._sentinel.master_for(self._address.master, **self._options)
                else:
                    self._single = aioredis.Redis(
                        host=self._address.host, port=self._address.port, **self._options
                    )
            return self._single

    async def _cluster_client(self) -> aioredis.Redis:
        try:
            if self._cluster is None:
                nodes = [ClusterNode(h, p) for h, p in self._address.cluster_endpoints()]
                cluster = RedisCluster(startup_nodes=nodes, **self._options)
                await cluster.initialize()
                self._cluster, self._stale = cluster, False
            elif self._stale:
                await self._cluster.nodes_manager.initialize()
                self._stale = False
            node = self._cluster.get_node_from_key(self._key)
            if node.name not in self._nodes:
                self._nodes[node.name] = aioredis.Redis(host=node.host, port=node.port,
                                                        **self._options)
            return self._nodes[node.name]
        except RedisError:
            self._stale = True
            raise
        except Exception as e:  # RedisClusterException is not a RedisError
            self._stale = True
            raise RedisConnectionError(f"cluster {self._address.cluster}: {e}") from e

    def broken(self, error: BaseException) -> None:
        if is_broken(error):
            self._stale = True

    async def node(self) -> str:
        client = await self.client()
        if self._address.sentinels:
            assert self._sentinel is not None
            host, port = await self._sentinel.discover_master(self._address.master)
            return f"{host}:{port}"
        if self._address.cluster:
            kwargs = client.connection_pool.connection_kwargs
            return f"{kwargs['host']}:{kwargs['port']}"
        return f"{self._address.host}:{self._address.port}"

    async def run(self, command: Callable[[Any], Any]) -> Any:
        try:
            return await command(await self.client())
        except RedisError as e:
            self.broken(e)
            raise

    async def close(self) -> None:
        clients = list(self._nodes.values()) + ([self._single] if self._single else [])
        for c in clients:
            await c.close()
        if self._cluster is not None:
            await self._cluster.close()
        self._single, self._cluster, self._nodes = None, None, {}
