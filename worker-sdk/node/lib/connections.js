'use strict';
// ioredis clients for a worker: one server, a Sentinel group, or a Cluster, from the `redis`
// option. Each serve slot gets a client of its own (a BLMOVE holds its connection), and so do
// the heartbeat and the rest (sign-on, extend, setting malformed messages aside).

const Redis = require('ioredis');
const { keySlot } = require('./cluster_slot');

const COMMAND_TIMEOUT_MS = 5000; // as the C++ SDK's kDefaultCommandTimeout

// Doubling from 100 ms to 2 s, as the C++ SDK waits out an outage.
function backoffMs(attempt) {
  return Math.min(100 * 2 ** Math.max(0, attempt - 1), 2000);
}

// `redis`: {host, port, username, password, db, tls, ...} for one server;
// {sentinels: [{host, port}], name, ...} for Sentinel; {cluster: [{host, port}], ...} for a
// Cluster. Other fields go to ioredis as they are. `longestBlockMs`: the longest BLMOVE the
// client sends; a reply that takes longer than that plus 5 s means a dead connection.
function createClient(redis, { longestBlockMs = 0, connectionName } = {}) {
  const { cluster, ...rest } = redis || {};
  const options = {
    ...rest,
    connectionName,
    enableReadyCheck: false, // INFO: not a command a worker's ACL user may need
    disableClientInfo: true, // CLIENT SETINFO: likewise
    autoResendUnfulfilledCommands: false, // a lost fetch reply must not fetch twice
    maxRetriesPerRequest: 1, // a command waits out one reconnect, then fails: the loop backs off
    retryStrategy: backoffMs,
    socketTimeout: longestBlockMs + COMMAND_TIMEOUT_MS,
  };
  if (cluster) {
    return new Redis.Cluster(cluster, {
      redisOptions: options,
      clusterRetryStrategy: backoffMs,
      enableReadyCheck: false,
      slotsRefreshTimeout: COMMAND_TIMEOUT_MS,
    });
  }
  return new Redis(options);
}

// The node `client` sends `key` to ("host:port"), or '' while it does not know.
function nodeOf(client, key) {
  if (client instanceof Redis.Cluster) {
    const nodes = client.slots[keySlot(key)];
    return nodes && nodes.length > 0 ? nodes[0] : '';
  }
  const stream = client.stream;
  return stream && stream.remoteAddress ? `${stream.remoteAddress}:${stream.remotePort}` : '';
}

// Sentinel or Cluster: a failover moves the queue to another node.
function isReplicated(redis) {
  return Boolean(redis && ((redis.sentinels && redis.sentinels.length > 0) || redis.cluster));
}

function isReplyError(error) {
  return error instanceof Redis.ReplyError;
}

// "host:port", "sentinel master 'jobs'" or "cluster host:port,...", for error messages.
function describeRedis(redis = {}) {
  if (redis.cluster) return `cluster ${redis.cluster.map((n) => `${n.host}:${n.port}`).join(',')}`;
  if (redis.sentinels && redis.sentinels.length > 0) return `sentinel master '${redis.name}'`;
  return `${redis.host || '127.0.0.1'}:${redis.port || 6379}`;
}

// A client's 'error' events: to the log (once per outage) rather than to ioredis's
// "Unhandled error event" on the console.
function watchErrors(client, log) {
  client.on('error', (e) => log.redisFailed(e));
  return client;
}

module.exports = { createClient, nodeOf, isReplicated, isReplyError, describeRedis, watchErrors, backoffMs };
