'use strict';
// A worker's membership of its queue (worker-sdk/src/membership.cpp): joining (the queue is
// announced, the first heartbeat), the heartbeat every heartbeatInterval, and leaving.

const { RowpumpError } = require('./errors');
const { Connection, describeRedis, isReplicated, isReplyError, backoffMs } = require('./connections');
const { scripts } = require('./scripts');
const { formatWorkerInfo } = require('./worker_info');
const { protocolMismatch } = require('./protocol_version');

const QUEUE_POLL_MS = 200;

class Membership {
  constructor(worker) {
    this.worker = worker;
    this.beatOn = ''; // the node of the last beat that went through
    this.heartbeat = null; // {client, timer, beating}
  }

  // Before the first fetch. Waits out Redis outages; false if the worker was stopped first.
  // Throws RowpumpError when the queue stays unknown past queueWait, or Redis refuses us.
  async join(client) {
    const { options, log } = this.worker;
    const deadline = this.worker.now() + options.queueWait;
    for (let attempt = 1; ; ++attempt) {
      try {
        if (!(await this.waitForQueue(client, deadline))) return false;
        // The first beat precedes the first BLMOVE, so the dispatcher never sees tasks in our
        // processing list without a heartbeat.
        await this.beat(client);
        break;
      } catch (e) {
        if (e instanceof RowpumpError) throw e;
        // At start-up an error reply is a configuration problem (a wrong password, a key of
        // the wrong type), except while Redis loads its data after a restart.
        if (isReplyError(e) && !e.message.startsWith('LOADING')) {
          throw new RowpumpError(`redis ${describeRedis(options.redis)}: ${e.message}`);
        }
        log.redisFailed(e);
      }
      await this.worker.sleep(backoffMs(attempt));
      if (this.worker.stopping) return false;
    }
    this.startHeartbeat();
    return true;
  }

  async waitForQueue(client, deadline) {
    const { keys, options } = this.worker;
    for (;;) {
      const [exists, values, protocol] = await Promise.all([
        client.command(['EXISTS', keys.meta]),
        client.command(['HGET', keys.meta, 'values']),
        client.command(['HGET', keys.meta, 'protocol']),
      ]);
      if (exists === 1) {
        const mismatch = protocolMismatch(protocol);
        if (mismatch) throw new RowpumpError(`queue '${options.queue}': ${mismatch}`);
        this.worker.declared.update(values || '');
        return true;
      }
      const now = this.worker.now();
      if (now >= deadline) {
        throw new RowpumpError(`unknown queue '${options.queue}': no dispatcher has announced it ` +
          `(key ${keys.meta} is missing)`);
      }
      if (this.worker.stopping) return false;
      await this.worker.sleep(Math.min(QUEUE_POLL_MS, deadline - now));
    }
  }

  async beat(client) {
    const { keys, options, log } = this.worker;
    // SET before SADD: a listed worker without a heartbeat is one the dispatcher reaps.
    const [, , values] = await Promise.all([
      client.command(['SET', keys.heartbeat, formatWorkerInfo(this.worker.reporter.done, options.heartbeatTtl),
        'PX', options.heartbeatTtl]),
      client.command(['SADD', keys.workers, options.workerId]),
      client.command(['HGET', keys.meta, 'values']),
    ]);
    // The dispatcher may be restarted with another on_success: follow it.
    if (values !== null) this.worker.declared.update(values);
    // With Sentinel or Cluster, the queue's node changing means a failover (or a resharding),
    // which may have lost reports: the tasks in our processing list go back. Judged by the
    // node, not by a failure: this client may have reached the new master without ever
    // failing, while other clients wrote to the old one.
    const node = client.node(keys.heartbeat);
    if (isReplicated(options.redis) && this.beatOn && node && node !== this.beatOn) await this.giveBack(client);
    if (node) this.beatOn = node;
    log.redisOk();
  }

  // Should this fail, the beat fails with it, and the next beat tries again.
  async giveBack(client) {
    const { keys, log } = this.worker;
    const given = Number(await scripts.giveBack.run(client, [keys.processing, keys.ready], []));
    if (given > 0) {
      log.line(`Redis failed over: gave ${given} task(s) in hand back to the ready list; they run again`);
    }
  }

  startHeartbeat() {
    const { options, log } = this.worker;
    const client = new Connection(options.redis, { connectionName: `rowpump-worker-${options.workerId}-heartbeat`, log });
    const hb = { client, timer: null, beating: null, attempt: 0 };
    const schedule = (ms) => {
      hb.timer = setTimeout(() => {
        hb.beating = this.beat(client).then(() => {
          hb.attempt = 0;
          return options.heartbeatInterval;
        }, (e) => {
          log.redisFailed(e);
          return Math.min(backoffMs(++hb.attempt), options.heartbeatInterval);
        }).then((next) => {
          hb.beating = null;
          if (this.heartbeat === hb) schedule(next);
        });
      }, ms);
    };
    this.heartbeat = hb;
    schedule(options.heartbeatInterval);
  }

  async stopHeartbeat() {
    const hb = this.heartbeat;
    if (!hb) return;
    this.heartbeat = null; // first, so no beat can list us again after we leave
    clearTimeout(hb.timer);
    if (hb.beating) await hb.beating;
    hb.client.disconnect();
  }

  // Stops the heartbeat and signs off: the heartbeat deleted, and the worker id taken out of
  // the workers set if its processing list is empty (else the dispatcher takes the tasks
  // back at once, since the heartbeat is gone).
  async leave(client) {
    const { keys, options, log } = this.worker;
    await this.stopHeartbeat();
    for (let attempt = 1; ; ++attempt) {
      try {
        const left = Number(await scripts.leave.run(client, [keys.heartbeat, keys.processing, keys.workers], [options.workerId]));
        if (left > 0) log.line(`${left} task(s) left in ${keys.processing}; the dispatcher takes them back`);
        return;
      } catch (e) {
        if (attempt === 3) {
          log.line(`could not sign off (${e.message}); the heartbeat lapses on its own`);
          return;
        }
      }
      await this.worker.sleep(backoffMs(attempt), { stoppable: false });
    }
  }
}

module.exports = { Membership };
