'use strict';
// The worker: run(handler) takes tasks from a queue's ready list, runs the handler on up to
// `concurrency` of them at once and reports each outcome, until stop().

const { RowpumpError } = require('./errors');
const { Connection } = require('./connections');
const { DeclaredValues } = require('./outcome_check');
const { Fetcher } = require('./fetcher');
const { formatDone } = require('./messages');
const { HeldTasks } = require('./held_tasks');
const { workerKeys } = require('./keys');
const { Membership } = require('./membership');
const { validated, longestBlock } = require('./options');
const { Reporter } = require('./reporter');
const { ServeLoop } = require('./serve_loop');
const { doneHead } = require('./task');
const { WorkerLog } = require('./worker_log');

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'];

class Worker {
  // Checks the options (throws RowpumpError); connects in run().
  constructor(options) {
    this.options = validated(options);
    this.keys = workerKeys(this.options.queue, this.options.workerId);
    this.log = new WorkerLog(this.options.log, this.options.workerId);
    this.longestBlock = longestBlock(this.options.heartbeatTtl, this.options.heartbeatInterval);
    this.declared = new DeclaredValues(this.options.queue);
    this.held = new HeldTasks(this.keys, this.log, () => this.now());
    this.fetcher = new Fetcher(this);
    this.reporter = new Reporter(this);
    this.membership = new Membership(this);
    this.stopping = false;
    this.badMessages = 0; // malformed ready messages moved to the bad list
    this.inHand = 0; // handlers running now
    this.control = null; // the connection for joining, extend and leaving
    this.finished = null; // run()'s end, for stop()
    this.wakeSleepers = new Set();
  }

  get workerId() {
    return this.options.workerId;
  }

  now() {
    return performance.now();
  }

  // Waits `ms`, or less once stop() is called (unless not stoppable).
  sleep(ms, { stoppable = true } = {}) {
    if (stoppable && this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeSleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      if (stoppable) this.wakeSleepers.add(done);
    });
  }

  // Runs `handler` (async (task) => ok(...) | retry(...) | fail(...)) on up to `concurrency`
  // tasks at once until stop(), then drains: no new fetches, tasks in hand finish and are
  // reported, the heartbeat is deleted. Resolves then; rejects with RowpumpError when the queue
  // is unknown or Redis refuses the login. Redis outages are waited out.
  async run(handler) {
    if (typeof handler !== 'function') throw new TypeError('run: the handler must be a function');
    if (this.finished) throw new RowpumpError('run: a Worker runs once (create another one)');
    let finish;
    this.finished = new Promise((resolve) => { finish = resolve; });
    const unhook = this.options.handleSignals ? this.hookSignals() : () => {};
    this.control = new Connection(this.options.redis, { connectionName: `rowpump-worker-${this.options.workerId}`, log: this.log });
    try {
      if (!(await this.membership.join(this.control))) return;
      await this.serve(handler);
    } finally {
      unhook();
      this.control.disconnect();
      this.control = null;
      finish();
    }
  }

  // One ServeLoop per slot; the first error stops the others and is thrown once all are done.
  async serve(handler) {
    let error = null;
    const loops = [];
    for (let slot = 0; slot < this.options.concurrency; ++slot) {
      loops.push(new ServeLoop(this, handler, slot).run().catch((e) => {
        if (!error) error = e;
        this.stop();
      }));
    }
    await Promise.all(loops);
    await this.membership.leave(this.control);
    if (error) throw error;
    if (this.membership.superseded) throw new RowpumpError(this.membership.superseded);
  }

  // Asks run() to drain and end. Resolves when it has: every task in hand reported and the
  // heartbeat deleted (at once if run() is not running).
  stop() {
    this.stopping = true;
    for (const wake of [...this.wakeSleepers]) wake();
    return this.finished || Promise.resolve();
  }

  // Keeps the claim for `leaseMs` from now, for tasks that run longer than the queue's lease:
  // an `extend` done message (docs/protocol.md); the task stays in hand.
  async extend(task, leaseMs) {
    if (!Number.isInteger(leaseMs) || leaseMs <= 0) {
      throw new RowpumpError('extend: the lease must be a positive number of milliseconds');
    }
    if (!this.control) throw new RowpumpError('extend: the worker is not running');
    const done = Buffer.from(formatDone({ head: doneHead(task), verb: 'extend', leaseMs }), 'latin1');
    await this.control.command(['RPUSH', this.keys.done, done]);
  }

  // SIGTERM or SIGINT: drain and stop; a second one ends the process at once.
  hookSignals() {
    const handlers = new Map();
    const unhook = () => {
      for (const [signal, h] of handlers) process.removeListener(signal, h);
      handlers.clear();
    };
    for (const signal of STOP_SIGNALS) {
      const h = () => {
        if (this.stopping) {
          unhook();
          process.kill(process.pid, signal); // the default action: end now
          return;
        }
        this.log.line(`${signal}: finishing ${this.inHand} task(s) in hand, then stopping`);
        this.stop();
      };
      handlers.set(signal, h);
      process.on(signal, h);
    }
    return unhook;
  }
}

module.exports = { Worker };
