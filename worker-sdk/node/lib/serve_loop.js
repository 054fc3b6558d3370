'use strict';
// One slot of run() (worker-sdk/src/serve_loop.cpp): takes tasks, runs the handler on them
// one after another, and reports each hand together with the next fetch, in one round trip.
// `concurrency` slots run at once, each with a Redis connection of its own.

const { AdaptiveBatch } = require('./adaptive_batch');
const { Connection, isReplyError, backoffMs } = require('./connections');
const { checkedDoneMessage } = require('./outcome_check');
const { runHandler, taskDeadline } = require('./handler_run');
const { logText } = require('./log_text');
const { readyMessage } = require('./task');

class ServeLoop {
  constructor(worker, handler, slot) {
    this.worker = worker;
    this.handler = handler;
    this.client = new Connection(worker.options.redis, {
      connectionName: `rowpump-worker-${worker.options.workerId}-${slot}`,
      log: worker.log,
    });
    this.hand = []; // taken, waiting for the handler
    this.reports = []; // handled, waiting to be reported
    this.handlingMs = 0; // the handler's time on the reports waiting
    this.adaptive = new AdaptiveBatch();
    this.failures = 0; // fetches failed in a row
  }

  // Until the worker stops and every task in hand is reported.
  async run() {
    try {
      for (;;) {
        if (this.hand.length > 0) {
          await this.handleNext();
          continue;
        }
        if (this.worker.stopping) return;
        await this.fetchOne();
      }
    } finally {
      this.client.disconnect();
    }
  }

  async handleNext() {
    const { worker } = this;
    const task = this.hand.shift();
    const started = worker.now();
    const deadline = taskDeadline(task, worker.options.timeout);
    if (deadline.problem) worker.log.line(`task '${logText(task.id)}': ${deadline.problem}; using the worker's timeout`);
    worker.inHand += 1;
    let outcome;
    try {
      outcome = await runHandler(this.handler, task, deadline.ms);
    } finally {
      worker.inHand -= 1;
    }
    const handledMs = worker.now() - started;
    this.handlingMs += handledMs;
    this.reports.push({ task, done: checkedDoneMessage(task, outcome, worker.declared, handledMs) });
    if (this.hand.length === 0) {
      const reports = this.reports;
      this.reports = [];
      this.hand = await this.reportAndFetch(reports);
    }
  }

  takeCount() {
    return this.worker.options.batch === 0 ? this.adaptive.next : this.worker.options.batch;
  }

  // With nothing in hand: a blocking fetch, or a pause while Redis is away.
  async fetchOne() {
    const { worker } = this;
    try {
      const task = await worker.fetcher.fetch(this.client, worker.options.fetchTimeout);
      if (task) this.hand.push(task);
      this.failures = 0;
      worker.log.redisOk();
      return;
    } catch (e) {
      worker.log.redisFailed(e);
    }
    await worker.sleep(backoffMs(++this.failures));
  }

  // The reports and the next fetch share one round trip: on a busy queue a hand costs one.
  async reportAndFetch(reports) {
    const { worker } = this;
    try {
      if (worker.stopping) {
        await worker.reporter.reportUntilDone(this.client, reports, false);
        return [];
      }
      this.adaptive.handled(reports.length, this.handlingMs);
      this.handlingMs = 0;
      let reported = false;
      let next = [];
      try {
        await worker.held.giveBackOrphans(this.client);
        const count = this.takeCount();
        const started = worker.now();
        const report = worker.reporter.send(this.client, reports);
        const fetch = worker.fetcher.sendFetch(this.client, count);
        fetch.catch(() => {}); // read below, after the report's reply
        let roundTrip = 0;
        try {
          // The report's reply times a round trip even when the BLMOVE behind it then waits.
          worker.reporter.logRefused(reports, await report, false);
          roundTrip = worker.now() - started;
          reported = true;
        } catch (e) {
          if (!isReplyError(e)) throw e;
          // NOSCRIPT after a Redis restart, or worse: retried below, after the fetch reply.
        }
        next = await fetch;
        if (reported) this.adaptive.fetched(count, next.length, roundTrip);
        worker.log.redisOk();
      } catch (e) {
        worker.log.redisFailed(e);
        if (!isReplyError(e)) {
          worker.held.fetchReplyLost(); // the fetch was sent behind the reports
          if (!reported) await worker.reporter.reportUntilDone(this.client, reports, true);
          return [];
        }
        // An error reply to the fetch: the next one (a plain BLMOVE) waits for Redis.
      }
      if (!reported) await worker.reporter.reportUntilDone(this.client, reports, false);
      return await this.takeFetched(next);
    } finally {
      // Reported tasks are no longer held, whatever became of the report.
      for (const r of reports) worker.held.release(readyMessage(r.task));
    }
  }

  // Fetched messages that turn out malformed are set aside (Fetcher.take survives failures).
  async takeFetched(messages) {
    return this.worker.fetcher.takeAll(this.client, messages);
  }
}

module.exports = { ServeLoop };
