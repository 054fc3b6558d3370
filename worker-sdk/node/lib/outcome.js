'use strict';
// What a handler returns: ok(values), retry(reason, delayMs) or fail(reason).

class Outcome {
  constructor(verb, { values = {}, reason = '', delayMs } = {}) {
    this.verb = verb; // 'ok', 'retry' or 'fail', as the done message spells it
    this.values = values;
    this.reason = reason;
    this.delayMs = delayMs;
    Object.freeze(this);
  }
}

// Done. `values` fill the queue's on_success placeholders ({status: '2'} for `:status`);
// exactly the names the queue declares.
function ok(values = {}) {
  return new Outcome('ok', { values });
}

// Try again later: after `delayMs` if given, else after the queue's backoff.
function retry(reason = '', delayMs = undefined) {
  return new Outcome('retry', { reason: String(reason), delayMs });
}

// Give up: the row is dead, listed by `rowpump dead`, revived by `rowpump retry`.
function fail(reason = '') {
  return new Outcome('fail', { reason: String(reason) });
}

module.exports = { Outcome, ok, retry, fail };
