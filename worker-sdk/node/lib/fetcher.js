'use strict';
// Taking tasks from the ready list into this worker's processing list (worker-sdk/src/
// fetcher.cpp): one at a time with (B)LMOVE, or a batch at once with the take script;
// malformed messages are moved to the bad list.

const { secondsText } = require('./duration');
const { isReplyError } = require('./connections');
const { logText } = require('./log_text');
const { parseReady } = require('./messages');
const { scripts } = require('./scripts');
const { makeTask } = require('./task');

class Fetcher {
  constructor(worker) {
    this.worker = worker; // options, keys, held, log, stopping, now, badMessages
  }

  get maxBlock() {
    return this.worker.longestBlock;
  }

  // Waits up to `timeoutMs` for one task, in blocks of at most maxBlock; null when none came
  // (or, between blocks, once the worker is stopping).
  async fetch(client, timeoutMs) {
    const { keys, held } = this.worker;
    const deadline = this.worker.now() + timeoutMs;
    for (;;) {
      await held.giveBackOrphans(client);
      const left = Math.floor(deadline - this.worker.now());
      let message;
      try {
        if (left > 0) {
          const block = Math.min(left, this.maxBlock);
          message = await client.command(['BLMOVE', keys.ready, keys.processing, 'LEFT', 'RIGHT', secondsText(block)],
            { buffers: true, blockMs: block });
          if (!message && block < left) {
            if (this.worker.stopping) return null;
            continue; // the next block
          }
        } else {
          message = await client.command(['LMOVE', keys.ready, keys.processing, 'LEFT', 'RIGHT'], { buffers: true });
        }
      } catch (e) {
        if (!isReplyError(e)) held.fetchReplyLost(); // Redis may have moved a task we never heard of
        throw e;
      }
      if (!message) return null;
      const task = await this.take(client, message);
      if (task) return task;
    }
  }

  // True when the fetch of `count` tasks is a blocking BLMOVE: one task, with batch 1 or
  // adaptive. Otherwise the take script, which does not block.
  blocks(count) {
    return count === 1 && this.worker.options.batch <= 1;
  }

  // The fetch that a slot sends right behind its reports, in the same round trip. Resolves to
  // the messages now in the processing list (Buffers).
  async sendFetch(client, count) {
    const { keys, held, options } = this.worker;
    try {
      if (this.blocks(count)) {
        const block = Math.min(options.fetchTimeout, this.maxBlock);
        const message = await client.command(['BLMOVE', keys.ready, keys.processing, 'LEFT', 'RIGHT', secondsText(block)],
          { buffers: true, blockMs: block });
        return message ? [message] : [];
      }
      return await scripts.take.run(client, [keys.ready, keys.processing], [String(count)], { buffers: true });
    } catch (e) {
      if (!isReplyError(e)) held.fetchReplyLost();
      throw e;
    }
  }

  // Messages now in our processing list turned into tasks; malformed ones set aside.
  async takeAll(client, messages) {
    const tasks = [];
    for (const message of messages) {
      const task = await this.take(client, message);
      if (task) tasks.push(task);
    }
    return tasks;
  }

  async take(client, message) {
    const parsed = parseReady(message);
    if (parsed.task) {
      this.worker.held.hold(message);
      return makeTask(parsed.task);
    }
    try {
      await this.setAside(client, message, parsed.error);
    } catch (e) {
      // It stays in the processing list, held by no slot: given back to the ready list
      // (and set aside when taken again) as if its fetch reply had been lost.
      this.worker.log.redisFailed(e);
      this.worker.held.fetchReplyLost();
    }
    return null;
  }

  async setAside(client, message, error) {
    const { keys, log } = this.worker;
    // The complete script moves a message between lists atomically: reused for the bad list.
    await scripts.complete.run(client, [keys.processing, keys.bad], [message, message]);
    this.worker.badMessages += 1;
    log.line(`malformed ready message '${logText(message)}' (${logText(error)}) moved to ${keys.bad}`);
  }
}

module.exports = { Fetcher };
