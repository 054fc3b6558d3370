'use strict';
// The tasks this worker's slots hold (fetched, not reported yet), and the ones its processing
// list holds that no slot does (worker-sdk/src/held_tasks.cpp). A fetch that Redis executed
// but whose reply never arrived (the connection broke in between) leaves its tasks in the
// processing list, unknown to every slot. Nothing else would give them back: while this worker
// sends heartbeats the dispatcher counts them as held, so they would wait, unrun, for as long
// as the worker lives.

const { scripts } = require('./scripts');

// A reply in flight reaches its slot well within this; a message no slot has taken for this
// long after a lost reply never will be.
const ORPHAN_AGE_MS = 1000;

class HeldTasks {
  constructor(keys, log, now = () => performance.now()) {
    this.keys = keys;
    this.log = log;
    this.now = now;
    this.held = new Map(); // message (latin1) -> how many slots hold it
    this.replyLost = false;
    this.looking = false; // one look at a time
    this.suspects = null; // Set of messages unheld at the first look
    this.suspectsAt = 0;
  }

  hold(message) {
    const key = message.toString('latin1');
    this.held.set(key, (this.held.get(key) || 0) + 1);
  }

  release(message) {
    const key = message.toString('latin1');
    const count = this.held.get(key) || 0;
    if (count <= 1) this.held.delete(key);
    else this.held.set(key, count - 1);
  }

  // A fetch failed after it may have reached Redis: its reply may be lost.
  fetchReplyLost() {
    this.replyLost = true;
  }

  // Costs nothing unless a reply was lost. Then a first call notes the messages in the
  // processing list that no slot holds, and the first call ORPHAN_AGE_MS or more later moves
  // those still there and still unheld back to the ready list (with the complete script, so
  // each one moves only if it is still in the processing list). Throws Redis errors.
  async giveBackOrphans(client) {
    if ((!this.replyLost && !this.suspects) || this.looking) return;
    this.looking = true;
    try {
      if (!this.suspects) {
        // A reply lost from now on starts a look of its own; this one is owed until it is done.
        this.replyLost = false;
        try {
          const unheld = await this.unheld(client);
          this.suspects = unheld.size > 0 ? unheld : null;
          this.suspectsAt = this.now();
        } catch (e) {
          this.replyLost = true;
          throw e;
        }
        return;
      }
      if (this.now() - this.suspectsAt < ORPHAN_AGE_MS) return;
      const args = [];
      for (const message of await this.unheld(client)) {
        if (!this.suspects.has(message)) continue;
        const bytes = Buffer.from(message, 'latin1');
        args.push(bytes, bytes);
      }
      const moved = args.length === 0 ? 0
        : Number(await scripts.complete.run(client, [this.keys.processing, this.keys.ready], args));
      this.suspects = null; // only now: a look that failed is tried again
      if (moved > 0) {
        this.log.line(`gave back ${moved} task(s) that a fetch had moved into ${this.keys.processing} ` +
          'but whose reply was lost');
      }
    } finally {
      this.looking = false;
    }
  }

  async unheld(client) {
    const listed = await client.command(['LRANGE', this.keys.processing, 0, -1], { buffers: true });
    const out = new Set();
    for (const bytes of listed) {
      const message = bytes.toString('latin1');
      if (!this.held.has(message)) out.add(message);
    }
    return out;
  }
}

module.exports = { HeldTasks, ORPHAN_AGE_MS };
