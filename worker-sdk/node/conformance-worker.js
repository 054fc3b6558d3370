#!/usr/bin/env node
'use strict';
// The conformance worker: a rowpump-worker whose behaviour tests choose by flags, the same
// flags as the C++ tests/tools/test_worker.cpp plus a few, so one driver runs the same
// scenarios against the worker SDK of each language.
//
//   --redis-host H --redis-port P
//   --sentinel HOST:PORT (repeatable) --sentinel-master NAME     Sentinel instead of host/port
//   --cluster HOST:PORT (repeatable)                              Cluster seeds instead
//   --queue Q --threads N --batch B --worker-id ID               threads = concurrency
//   --heartbeat-ttl-ms MS --queue-wait-ms MS --fetch-timeout-ms MS
//   --work-ms MS                 sleep this long in each task
//   --fail-mode none|retry|fail|throw|hang   (hang: never resolves unless aborted by the deadline)
//   --retry-delay-ms MS          with retry: the delay it asks for
//   --value NAME=VALUE           sent with success (repeatable)
//   --extend-ms MS               call extend(task, MS) before working
//   --timeout-ms MS              the handler deadline
//   --log FILE                   one line per handled task, appended with one write:
//                                "<id> <token> <attempt>" then " name=value" per task field
//                                (id and values percent-encoded as on the wire; NULL: bare name)
//   --max-tasks N                stop after N handled tasks
//
// Prints "worker_id=<id>" on stdout once started. SIGTERM/SIGINT: finish the tasks in hand,
// exit 0. Exit 1 when the worker fails (an unknown queue, ...), 2 on bad flags.

const fs = require('node:fs');
const { setTimeout: sleep } = require('node:timers/promises');
const { Worker, ok, retry, fail } = require('./index');
const { percentEncode } = require('./lib/messages');

const FAIL_MODES = ['none', 'retry', 'fail', 'throw', 'hang'];

class UsageError extends Error {}

function hostPort(flag, value) {
  const colon = value.lastIndexOf(':');
  const port = Number(value.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new UsageError(`${flag} takes HOST:PORT, not '${value}'`);
  }
  return { host: value.slice(0, colon), port };
}

function parseArgs(argv) {
  const a = {
    options: { redis: {} }, workMs: 0, failMode: 'none', retryDelayMs: undefined, values: {},
    extendMs: 0, logPath: '', maxTasks: 0, sentinels: [], sentinelMaster: '', cluster: [],
  };
  const integer = (flag, value, min = 0) => {
    if (!/^[0-9]+$/.test(value) || Number(value) < min) throw new UsageError(`${flag} takes a whole number, not '${value}'`);
    return Number(value);
  };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new UsageError(`missing value after ${flag}`);
    switch (flag) {
      case '--redis-host': a.options.redis.host = value; break;
      case '--redis-port': a.options.redis.port = integer(flag, value, 1); break;
      case '--sentinel': a.sentinels.push(hostPort(flag, value)); break;
      case '--sentinel-master': a.sentinelMaster = value; break;
      case '--cluster': a.cluster.push(hostPort(flag, value)); break;
      case '--queue': a.options.queue = value; break;
      case '--threads': a.options.concurrency = integer(flag, value); break;
      case '--batch': a.options.batch = integer(flag, value); break;
      case '--worker-id': a.options.workerId = value; break;
      case '--heartbeat-ttl-ms': a.options.heartbeatTtl = integer(flag, value); break;
      case '--queue-wait-ms': a.options.queueWait = integer(flag, value); break;
      case '--fetch-timeout-ms': a.options.fetchTimeout = integer(flag, value); break;
      case '--timeout-ms': a.options.timeout = integer(flag, value); break;
      case '--work-ms': a.workMs = integer(flag, value); break;
      case '--retry-delay-ms': a.retryDelayMs = integer(flag, value); break;
      case '--extend-ms': a.extendMs = integer(flag, value, 1); break;
      case '--log': a.logPath = value; break;
      case '--max-tasks': a.maxTasks = integer(flag, value); break;
      case '--fail-mode':
        if (!FAIL_MODES.includes(value)) throw new UsageError(`--fail-mode takes ${FAIL_MODES.join(', ')}`);
        a.failMode = value;
        break;
      case '--value': {
        const eq = value.indexOf('=');
        if (eq < 0) throw new UsageError('--value takes NAME=VALUE');
        a.values[value.slice(0, eq)] = value.slice(eq + 1);
        break;
      }
      default:
        throw new UsageError(`unknown flag ${flag}`);
    }
  }
  if (a.sentinels.length > 0) {
    if (!a.sentinelMaster) throw new UsageError('--sentinel needs --sentinel-master');
    a.options.redis = { sentinels: a.sentinels, name: a.sentinelMaster };
  } else if (a.sentinelMaster) {
    throw new UsageError('--sentinel-master needs --sentinel');
  }
  if (a.cluster.length > 0) a.options.redis = { cluster: a.cluster };
  return a;
}

// "<id> <token> <attempt>[ name=value]...\n", the id and values as the wire encodes them.
function logLine(task) {
  let line = `${percentEncode(task.rawId)} ${task.token} ${task.attempt}`;
  for (const [name, value] of Object.entries(task.fields)) {
    line += ' ' + name + (value === null ? '' : '=' + percentEncode(value));
  }
  return line + '\n';
}

// Resolves only when `signal` aborts (the handler's deadline), never without a deadline.
function hang(signal) {
  return new Promise((resolve, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

async function main(a) {
  const logFd = a.logPath ? fs.openSync(a.logPath, 'a') : null; // O_APPEND: one write per line
  const worker = new Worker(a.options);
  process.stdout.write(`worker_id=${worker.workerId}\n`);
  let handled = 0;
  await worker.run(async (task) => {
    if (a.extendMs > 0) await worker.extend(task, a.extendMs);
    if (a.workMs > 0) await sleep(a.workMs);
    if (logFd !== null) fs.writeSync(logFd, logLine(task));
    if (a.maxTasks > 0 && ++handled >= a.maxTasks) worker.stop();
    switch (a.failMode) {
      case 'retry': return retry('test worker: retry requested', a.retryDelayMs);
      case 'fail': return fail('test worker: fail requested');
      case 'throw': throw new Error(`test worker: handler threw for ${task.id}`);
      case 'hang': return hang(task.signal);
      default: return ok(a.values);
    }
  });
}

let args;
try {
  args = parseArgs(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`conformance-worker: ${e.message}\n`);
  process.exit(2);
}
main(args).then(() => process.exit(0), (e) => {
  process.stderr.write(`conformance-worker: ${e.message}\n`);
  process.exit(1);
});
