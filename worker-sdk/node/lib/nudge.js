'use strict';
// Waking the dispatcher: a producer that has just committed a due row nudges its queue, and
// the leading dispatcher claims at once instead of at its next poll. In any language:
// PUBLISH rowpump:{<queue>}:nudge 1 (docs/protocol.md, "Nudging the dispatcher").

const { RowpumpError } = require('./errors');
const { Connection } = require('./connections');
const { queueKeys } = require('./keys');
const { isValidName } = require('./messages');

function checkedChannel(queue) {
  if (!isValidName(queue)) {
    throw new RowpumpError(`nudge: queue '${queue}' must be 1 to 64 characters from [A-Za-z0-9_.-]`);
  }
  return queueKeys(queue).nudge;
}

// Keeps one connection: one PUBLISH per nudge(). close() when done.
class Nudger {
  constructor(redis, queue) {
    this.channel = checkedChannel(queue);
    this.redis = redis || {};
    this.client = null;
  }

  async nudge() {
    if (!this.client) this.client = new Connection(this.redis); // a failing PUBLISH says what failed
    await this.client.command(['PUBLISH', this.channel, '1']);
  }

  close() {
    if (this.client) this.client.disconnect();
    this.client = null;
  }
}

// One nudge on a connection of its own.
async function nudge(redis, queue) {
  const nudger = new Nudger(redis, queue);
  try {
    await nudger.nudge();
  } finally {
    nudger.close();
  }
}

module.exports = { Nudger, nudge };
