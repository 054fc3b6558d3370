'use strict';
// How many tasks a slot takes in its next round trip when `batch` is 0 (adaptive, the
// default): worker-sdk/src/adaptive_batch.cpp, with times in milliseconds.
//
// Taking k tasks at once saves k - 1 round trips, but the last of them waits in this slot's
// hand while the handler runs on the others. k grows (doubling) only while the ready list had
// as many tasks as were asked for, falls to what it had when it had fewer, and never exceeds
// round trip / handler time; a handler as slow as a round trip brings k back to 1 at once.

const DEFAULT_LIMIT = 16;

class AdaptiveBatch {
  constructor(limit = DEFAULT_LIMIT) {
    this.limit = Math.max(1, limit);
    this.next = 1;
    this.perTask = -1; // the last hand's handler time per task; < 0: not measured yet
    this.roundTrip = 0; // a moving average
  }

  allowed() {
    if (this.perTask < 0 || this.roundTrip === 0) return 1;
    if (this.perTask >= this.roundTrip) return 1;
    const fits = this.perTask === 0 ? this.limit : Math.floor(this.roundTrip / this.perTask);
    return Math.min(Math.max(fits, 1), this.limit);
  }

  // The handler ran on `tasks` tasks (one hand) and took `handlingMs` for all of them.
  handled(tasks, handlingMs) {
    if (tasks <= 0) return;
    this.perTask = handlingMs / tasks;
    this.next = Math.min(this.next, this.allowed());
  }

  // A round trip that asked for `asked` tasks lasted `roundTripMs` and brought `got`.
  fetched(asked, got, roundTripMs) {
    this.roundTrip = this.roundTrip === 0 ? roundTripMs : (3 * this.roundTrip + roundTripMs) / 4;
    const wanted = got >= asked ? 2 * asked : Math.max(got, 1);
    this.next = Math.min(wanted, this.allowed());
  }
}

module.exports = { AdaptiveBatch, DEFAULT_LIMIT };
