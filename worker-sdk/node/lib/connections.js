'use strict';
// Redis connections of a worker: one server, a Sentinel group, or a Cluster, from the `redis`
// option, through ioredis. Each serve slot has a connection of its own (a BLMOVE holds its
// connection), and so do the heartbeat and the rest (sign-on, extend, setting malformed
// messages aside, sign-off).

const Redis = require('ioredis');
const { keySlot } = require('./cluster_slot');

const COMMAND_TIMEOUT_MS = 5000; // as the C++ SDK's kDefaultCommandTimeout

// Doubling from 100 ms to 2 s, as the C++ SDK waits out an outage.
function backoffMs(attempt) {
  return Math.min(100 * 2 ** Math.max(0, attempt - 1), 2000);
}

// The command's connection closed, or no reply came in time: Redis may have executed it.
class ConnectionLost extends Error {
  constructor(message) {
    super(message);
    this.name = 'ConnectionLost';
  }
}

// `redis`: {host, port, username, password, db, tls, ...} for one server;
// {sentinels: [{host, port}], name, ...} for Sentinel; {cluster: [{host, port}], ...} for a
// Cluster. Other fields go to ioredis as they are.
function createClient(redis, connectionName) {
  const { cluster, ...rest } = redis || {};
  const options = {
    // Sentinel: hear of a failover from the sentinels and reconnect at once, rather than when
    // the old master goes away or turns replica.
    failoverDetector: Boolean(rest.sentinels),
    ...rest,
    connectionName,
    enableReadyCheck: false, // INFO: not a command a worker's ACL user needs
    disableClientInfo: true, // CLIENT SETINFO: likewise
    autoResendUnfulfilledCommands: false, // a lost fetch reply must not fetch twice
    maxRetriesPerRequest: 1, // a command waits out one reconnect, then fails: the loop backs off
    retryStrategy: backoffMs,
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

class Connection {
  // `log`: a WorkerLog for the client's error events (else they are dropped: the failing
  // commands say it).
  constructor(redis, { connectionName, log } = {}) {
    this.client = createClient(redis, connectionName);
    this.client.setMaxListeners(0); // one 'close' listener per command in flight
    this.client.on('error', (e) => (log ? log.redisFailed(e) : undefined));
  }

  // Sends one command (`args`: verb and arguments, Buffers or strings) and resolves to its
  // reply (Buffers with `buffers`). Rejects with ConnectionLost when the connection closes
  // before the reply, or none comes within `blockMs` (how long the command may block in
  // Redis) plus 5 s: ioredis drops a command whose connection broke without settling it when
  // it must not send it again, as a fetch must not.
  command(args, { buffers = false, blockMs = 0 } = {}) {
    const { client } = this;
    const sent = (buffers ? client.callBuffer : client.call).apply(client, args);
    return new Promise((resolve, reject) => {
      const timeoutMs = blockMs + COMMAND_TIMEOUT_MS;
      const settle = () => {
        clearTimeout(timer);
        client.removeListener('close', closed);
      };
      const closed = () => {
        settle();
        reject(new ConnectionLost(`connection closed before the reply to ${args[0]}`));
      };
      const timer = setTimeout(() => {
        settle();
        reject(new ConnectionLost(`no reply to ${args[0]} within ${timeoutMs} ms`));
        client.disconnect(true); // a connection that went silent: start over
      }, timeoutMs);
      client.on('close', closed);
      sent.then((reply) => {
        settle();
        resolve(reply);
      }, (e) => {
        settle();
        reject(e);
      });
    });
  }

  // The node this connection sends `key` to ("host:port"), or '' while it does not know.
  node(key) {
    const { client } = this;
    if (client instanceof Redis.Cluster) {
      const nodes = client.slots[keySlot(key)];
      return nodes && nodes.length > 0 ? nodes[0] : '';
    }
    const stream = client.stream;
    return stream && stream.remoteAddress ? `${stream.remoteAddress}:${stream.remotePort}` : '';
  }

  disconnect() {
    this.client.disconnect();
  }
}

// Sentinel or Cluster: a failover moves the queue to another node.
function isReplicated(redis) {
  return Boolean(redis && ((redis.sentinels && redis.sentinels.length > 0) || redis.cluster));
}

// An error reply from Redis (as opposed to a connection that failed).
function isReplyError(error) {
  return error instanceof Redis.ReplyError;
}

// "host:port", "sentinel master 'jobs'" or "cluster host:port,...", for error messages.
function describeRedis(redis = {}) {
  if (redis.cluster) return `cluster ${redis.cluster.map((n) => `${n.host}:${n.port}`).join(',')}`;
  if (redis.sentinels && redis.sentinels.length > 0) return `sentinel master '${redis.name}'`;
  return `${redis.host || '127.0.0.1'}:${redis.port || 6379}`;
}

module.exports = { Connection, ConnectionLost, isReplicated, isReplyError, describeRedis, backoffMs, COMMAND_TIMEOUT_MS };
