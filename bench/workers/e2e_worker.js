#!/usr/bin/env node
'use strict';
// The end-to-end benchmark's worker on the Node.js SDK (worker-sdk/node): the flags of
// bench/e2e_worker.cpp, mode noop only (reports ok with status=1, or sleeps --handler-ms first).
//
//   node e2e_worker.js --redis-host H --redis-port P [--queue bench] [--threads N] [--batch B]
//                      [--handler-ms MS] [--mode noop] [--time-limit S]
//
// --threads is the worker's concurrency (one process, one event loop). SIGTERM or SIGINT: stop
// fetching, finish the tasks in hand, exit 0 (the SDK's own signal handling). --time-limit is
// a backstop: a forgotten worker stops by itself. Needs worker-sdk/node's packages (npm ci).

const path = require('node:path');
const { parseArgs } = require('node:util');

const { Worker, ok } = require(path.join(__dirname, '..', '..', 'worker-sdk', 'node'));

function main() {
  const { values } = parseArgs({
    options: {
      'redis-host': { type: 'string', default: '127.0.0.1' },
      'redis-port': { type: 'string' },
      queue: { type: 'string', default: 'bench' },
      threads: { type: 'string', default: '1' },
      batch: { type: 'string', default: '0' },
      'handler-ms': { type: 'string', default: '0' },
      mode: { type: 'string', default: 'noop' },
      'time-limit': { type: 'string', default: '600' },
    },
  });
  if (!values['redis-port'] || values.mode !== 'noop') {
    console.error('usage: e2e_worker.js --redis-port P [--redis-host H] [--threads N] [--batch B] [--handler-ms MS]');
    process.exit(2);
  }
  const worker = new Worker({
    queue: values.queue,
    redis: { host: values['redis-host'], port: Number(values['redis-port']) },
    concurrency: Number(values.threads),
    batch: Number(values.batch),
  });
  const done = ok({ status: '1' });
  const pauseMs = Number(values['handler-ms']);
  const handler = pauseMs > 0
    ? () => new Promise((resolve) => setTimeout(() => resolve(done), pauseMs))
    : async () => done;
  setTimeout(() => worker.stop(), Number(values['time-limit']) * 1000).unref();
  worker.run(handler).then(() => process.exit(0), (e) => {
    console.error(`e2e_worker.js: ${e.message}`);
    process.exit(1);
  });
}

main();
