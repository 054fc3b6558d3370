'use strict';
// A worker's membership of its queue (worker-sdk/src/membership.cpp): joining (the queue is
// announced, the first heartbeat), the heartbeat every heartbeatInterval, and leaving.

const crypto = require('node:crypto');

const { RowpumpError } = require('./errors');
const { logText } = require('./log_text');
const { percentEncode } = require('./messages');
const { Connection, describeRedis, isReplicated, isReplyError, backoffMs } = require('./connections');
const { scripts } = require('./scripts');
const { formatWorkerInfo } = require('./worker_info');
const { protocolMismatch } = require('./protocol_version');

const QUEUE_POLL_MS = 200;
// How often a starting worker looks at a heartbeat another incarnation holds.
const TAKE_OVER_POLL_MS = 100;

// A worker process is its worker id plus an incarnation chosen at random when it joins
// (common/lua/beat.lua).
function newIncarnation() {
  return crypto.randomBytes(8).toString('hex');
}

class Membership {
  constructor(worker) {
    this.worker = worker;
    this.beatOn = ''; // the node of the last beat that went through
    this.heartbeat = null; // {client, timer, beating}
    this.incarnation = ''; // chosen at each join
    this.superseded = ''; // why this process gave the worker id up while serving
  }

  // Before the first fetch. Waits out Redis outages; false if the worker was stopped first.
  // Throws RowpumpError when the queue stays unknown past queueWait, or Redis refuses us.
  async join(client) {
    const { options, log } = this.worker;
    const deadline = this.worker.now() + options.queueWait;
    this.incarnation = newIncarnation();
    for (let attempt = 1; ; ++attempt) {
      try {
        if (!(await this.waitForQueue(client, deadline))) return false;
        // The first beat precedes the first BLMOVE, so the dispatcher never sees tasks in our
        // processing list without a heartbeat.
        const other = await this.beat(client, true);
        if (other !== null && !(await this.takeOver(client, other))) return false;
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

  // beat.lua: null when the beat went through, else the heartbeat's value (another
  // incarnation's). `first`: the first beat of this incarnation.
  async beat(client, first = false) {
    const { keys, options, log } = this.worker;
    // With Sentinel or Cluster, the queue's node changing means a failover (or a resharding),
    // which may have lost reports: the tasks in our processing list go back. Judged by the
    // node, not by a failure: this client may have reached the new master without ever
    // failing, while other clients wrote to the old one.
    const node = client.node(keys.heartbeat);
    if (isReplicated(options.redis) && this.beatOn && node && node !== this.beatOn) await this.giveBack(client);
    const info = `${formatWorkerInfo(this.worker.reporter.done, options.heartbeatTtl)};incarnation=${this.incarnation}`;
    const args = [options.workerId, info, String(options.heartbeatTtl), this.incarnation];
    if (first) {
      args.push(` retry reason=${percentEncode(`worker ${options.workerId} restarted before reporting it`)} delay=0ms`);
    }
    // The heartbeat before the workers set: a listed worker without one is reaped.
    const reply = await scripts.beat.run(client, [keys.heartbeat, keys.workers, keys.processing, keys.done], args);
    if (Array.isArray(reply)) return reply.length > 0 ? String(reply[0]) : '';
    if (Number(reply) > 0) {
      log.line(`gave ${reply} task(s) left in ${keys.processing} by an earlier process of worker id ` +
        `'${options.workerId}' back as retries`);
    }
    const values = await client.command(['HGET', keys.meta, 'values']);
    // The dispatcher may be restarted with another on_success: follow it.
    if (values !== null) this.worker.declared.update(values);
    if (node) this.beatOn = node;
    log.redisOk();
    return null;
  }

  // After the first beat found `other` in the heartbeat: waits until it lapses (then beats) or
  // is renewed (then throws RowpumpError). False when the worker was stopped first.
  async takeOver(client, other) {
    const { keys, options, log } = this.worker;
    log.line(`worker id '${options.workerId}' has a heartbeat of another process; starting once it lapses`);
    const refuse = (why) => new RowpumpError(`worker id '${options.workerId}' is in use by another live process ` +
      `(${why}) (heartbeat ${keys.heartbeat}: '${logText(other, 200)}'); give each process a worker_id of its own`);
    let lastTtl = Number(await client.command(['PTTL', keys.heartbeat]));
    for (;;) {
      if (lastTtl === -1) throw refuse('its heartbeat has no TTL');
      await this.worker.sleep(TAKE_OVER_POLL_MS);
      if (this.worker.stopping) return false;
      const [value, ttl] = await Promise.all([
        client.command(['GET', keys.heartbeat]),
        client.command(['PTTL', keys.heartbeat]),
      ]);
      if (value === null) { // it lapsed or its process stopped: ours, unless another came first
        const again = await this.beat(client, true);
        if (again === null) return true;
        other = again;
        lastTtl = Number(await client.command(['PTTL', keys.heartbeat]));
        continue;
      }
      if (value !== other || Number(ttl) > lastTtl) throw refuse('it renewed its heartbeat');
      lastTtl = Number(ttl);
    }
  }

  // A beat while serving: another incarnation in the heartbeat means ours lapsed and another
  // process took the worker id over (and gave back what we held): stop taking tasks into a
  // list that is no longer ours.
  async keepBeating(client) {
    const other = await this.beat(client);
    if (other === null) return;
    const { keys, options, log } = this.worker;
    this.superseded = `worker id '${options.workerId}' was taken over by another process while this one's ` +
      `heartbeat had lapsed (heartbeat ${keys.heartbeat}: '${logText(other, 200)}'); give each process a ` +
      'worker_id of its own';
    log.line(this.superseded);
    this.worker.stop();
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
        hb.beating = this.keepBeating(client).then(() => {
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
        const left = Number(await scripts.leave.run(client, [keys.heartbeat, keys.processing, keys.workers],
          [options.workerId, this.incarnation]));
        if (left === -1) log.line(`left the heartbeat alone: another process holds worker id '${options.workerId}'`);
        else if (left > 0) log.line(`${left} task(s) left in ${keys.processing}; the dispatcher takes them back`);
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
