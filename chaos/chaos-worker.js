#!/usr/bin/env node
'use strict';
// The chaos run's worker on the Node.js SDK (worker-sdk/node): the same flags and the same
// ledger as rowpump_chaos_worker (chaos/worker.cpp), so that the fleet mixes languages.
//
//   --redis-port P --queue Q --worker-id ID --ledger FILE
//   --threads N (concurrency) --batch B --heartbeat-ttl-ms MS
//
// Each handler run appends `<queue> <id> <token> <pid> <unix µs> <outcome>` to the ledger with
// one write on an O_APPEND descriptor (a line written survives kill -9), then returns the
// planned outcome (planned_outcome() in chaos/workload.hpp: `once` rows whose id is 250 mod 500
// fail, those 7 mod 20 retry on their first attempt); a success reports claim=<token>. The
// `keyed` queue's handler runs for KEYED_HANDLER_MS (kKeyedHandlerMs) and then appends
// `<queue> <id> <token> <pid> <unix µs> end`. (The run gives the keyed queue no Node.js slot:
// this worker's clock, performance.timeOrigin + now(), may drift from the system clock the
// other two read by a few ms over a run, which the verdict's overlaps would mistake.)
// SIGTERM/SIGINT: finish the tasks in hand, exit 0.

const fs = require('node:fs');
const { performance } = require('node:perf_hooks');
const { Worker, ok, retry, fail } = require('../worker-sdk/node');

const KEYED_HANDLER_MS = 100; // kKeyedHandlerMs in chaos/workload.hpp

function plannedOutcome(queue, id, attempt) {
  if (queue !== 'once') return 'ok';
  const n = Number(id);
  if (n % 500 === 250) return 'fail';
  if (n % 20 === 7 && attempt === 1) return 'retry';
  return 'ok';
}

function parseArgs(argv) {
  const a = { threads: 1, batch: 1, heartbeatTtlMs: 3000 };
  const names = {
    '--redis-port': 'redisPort', '--queue': 'queue', '--worker-id': 'workerId',
    '--ledger': 'ledger', '--threads': 'threads', '--batch': 'batch',
    '--heartbeat-ttl-ms': 'heartbeatTtlMs',
  };
  const numbers = new Set(['redisPort', 'threads', 'batch', 'heartbeatTtlMs']);
  for (let i = 0; i < argv.length; i += 2) {
    const name = names[argv[i]];
    if (!name || argv[i + 1] === undefined) throw new Error(`bad flag ${argv[i]}`);
    a[name] = numbers.has(name) ? Number(argv[i + 1]) : argv[i + 1];
  }
  for (const required of ['redisPort', 'queue', 'workerId', 'ledger']) {
    if (a[required] === undefined) throw new Error(`missing --${required}`);
  }
  return a;
}

async function main(a) {
  const fd = fs.openSync(a.ledger, 'a'); // O_APPEND: one write per line
  const worker = new Worker({
    queue: a.queue, redis: { port: a.redisPort }, concurrency: a.threads, batch: a.batch,
    workerId: a.workerId, heartbeatTtl: a.heartbeatTtlMs,
  });
  await worker.run(async (task) => {
    const outcome = plannedOutcome(a.queue, task.id, task.attempt);
    const note = (word) => {
      const micros = Math.round((performance.timeOrigin + performance.now()) * 1000);
      fs.writeSync(fd, `${a.queue} ${task.id} ${task.token} ${process.pid} ${micros} ${word}\n`);
    };
    note(outcome);
    if (a.queue === 'keyed') {
      await new Promise((resolve) => setTimeout(resolve, KEYED_HANDLER_MS));
      note('end');
    }
    if (outcome === 'fail') return fail('chaos: fails on purpose');
    if (outcome === 'retry') return retry('chaos: retries on purpose', 200);
    return ok({ claim: task.token });
  });
}

let args;
try {
  args = parseArgs(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`chaos-worker.js: ${e.message}\n`);
  process.exit(2);
}
main(args).then(() => process.exit(0), (e) => {
  process.stderr.write(`chaos-worker.js: ${e.message}\n`);
  process.exit(1);
});
