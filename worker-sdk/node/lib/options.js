'use strict';
// Worker options: defaults and checks (worker-sdk/src/options.cpp). Durations in milliseconds.

const crypto = require('node:crypto');
const os = require('node:os');
const { RowpumpError } = require('./errors');
const { isValidName } = require('./messages');

const MIN_HEARTBEAT_TTL_MS = 200;

const DEFAULTS = {
  redis: {},
  concurrency: 1, // handlers running at once
  batch: 0, // tasks a slot takes per round trip; 0: adaptive (1 to 16)
  heartbeatTtl: 10000, // the dispatcher takes tasks back this long after the worker died
  heartbeatInterval: 0, // 0: heartbeatTtl / 3
  queueWait: 30000, // how long to wait for a dispatcher to announce the queue
  fetchTimeout: 1000, // the longest a slot blocks in one fetch
  timeout: 0, // the handler deadline; 0: none
  handleSignals: true, // run() drains on SIGTERM/SIGINT
  log: null, // (line) => void; null: stderr
};

function sanitizedHostname() {
  const host = os.hostname().split('.')[0].replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 40);
  return host || 'worker';
}

// <hostname>-<pid>-<6 random hex digits>
function defaultWorkerId() {
  return `${sanitizedHostname()}-${process.pid}-${crypto.randomBytes(3).toString('hex')}`;
}

function check(ok, message) {
  if (!ok) throw new RowpumpError(`invalid worker options: ${message}`);
}

function isMs(value) {
  return Number.isInteger(value);
}

function validated(raw) {
  check(raw && typeof raw === 'object', 'options must be an object');
  const known = new Set([...Object.keys(DEFAULTS), 'queue', 'workerId']);
  for (const name of Object.keys(raw)) check(known.has(name), `unknown option '${name}'`);
  const o = { ...DEFAULTS, ...raw };
  for (const name of Object.keys(o)) if (o[name] === undefined) o[name] = DEFAULTS[name];
  check(typeof o.queue === 'string' && o.queue !== '', 'queue is required');
  check(isValidName(o.queue), `queue '${o.queue}' must be 1 to 64 characters from [A-Za-z0-9_.-]`);
  if (o.workerId === undefined || o.workerId === '') o.workerId = defaultWorkerId();
  check(isValidName(o.workerId), `workerId '${o.workerId}' must be 1 to 64 characters from [A-Za-z0-9_.-]`);
  check(o.redis && typeof o.redis === 'object', 'redis must be an object of connection options');
  if (o.redis.sentinels) check(typeof o.redis.name === 'string' && o.redis.name !== '', 'redis.sentinels needs redis.name (the master\'s name)');
  if (o.redis.cluster) check(Array.isArray(o.redis.cluster) && o.redis.cluster.length > 0, 'redis.cluster must list at least one node');
  check(isMs(o.concurrency) && o.concurrency >= 1 && o.concurrency <= 1024, `concurrency must be between 1 and 1024, not ${o.concurrency}`);
  check(isMs(o.batch) && o.batch >= 0 && o.batch <= 1000, `batch must be 0 (adaptive) or between 1 and 1000, not ${o.batch}`);
  check(isMs(o.heartbeatTtl) && o.heartbeatTtl >= MIN_HEARTBEAT_TTL_MS, `heartbeatTtl must be at least ${MIN_HEARTBEAT_TTL_MS} ms, not ${o.heartbeatTtl}`);
  if (o.heartbeatInterval === 0) o.heartbeatInterval = Math.floor(o.heartbeatTtl / 3);
  check(isMs(o.heartbeatInterval) && o.heartbeatInterval > 0 && o.heartbeatInterval < o.heartbeatTtl,
    `heartbeatInterval (${o.heartbeatInterval} ms) must be positive and shorter than heartbeatTtl (${o.heartbeatTtl} ms)`);
  check(isMs(o.fetchTimeout) && o.fetchTimeout > 0, 'fetchTimeout must be a positive number of milliseconds');
  check(isMs(o.queueWait) && o.queueWait >= 0, 'queueWait must not be negative');
  check(isMs(o.timeout) && o.timeout >= 0, 'timeout must be 0 (none) or a positive number of milliseconds');
  check(o.log === null || typeof o.log === 'function', 'log must be a function');
  return Object.freeze(o);
}

// Redis goes on serving a blocked BLMOVE of a client that froze or was cut off. A block that
// outlived the heartbeat could move a task into the processing list of a worker the dispatcher
// has already reaped. The last beat is at most one interval old when a block starts, so a
// block shorter than (ttl - interval) ends first; half of that leaves room for delays.
function longestBlock(heartbeatTtl, heartbeatInterval) {
  return Math.max(Math.floor((heartbeatTtl - heartbeatInterval) / 2), 10);
}

module.exports = { validated, defaultWorkerId, longestBlock, DEFAULTS };
