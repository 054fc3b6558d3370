'use strict';
// The Lua scripts a worker runs, from lua/*.lua (each the same text as its constant in
// common/src/scripts.cpp; test/scripts.test.js checks). Run as the C++ SDK runs them:
// EVALSHA, and EVAL when Redis answers NOSCRIPT (a restart emptied its script cache). A Redis
// user that may run loaded scripts only (docs/operations.md, "Least privilege": no EVAL) gets an error that
// says so; the worker retries Redis errors with backoff, and the dispatcher loads every script
// again once it finds Redis lost them.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

class Script {
  constructor(name) {
    this.name = name;
    this.body = fs.readFileSync(path.join(__dirname, '..', 'lua', `${name}.lua`), 'utf8');
    this.sha = crypto.createHash('sha1').update(this.body).digest('hex');
  }

  // `connection`: a Connection (connections.js). Replies as Buffers when `buffers`.
  async run(connection, keys, args, { buffers = false } = {}) {
    const call = (verb, script) => connection.command([verb, script, keys.length, ...keys, ...args], { buffers });
    try {
      return await call('EVALSHA', this.sha);
    } catch (e) {
      if (!isNoScript(e)) throw e;
    }
    try {
      return await call('EVAL', this.body);
    } catch (e) {
      if (!isNoPerm(e)) throw e;
      const error = new Error(
        `Redis does not have script ${this.name}.lua (${this.sha}) loaded (lost after a restart or ` +
          'failover) and this Redis user may not run EVAL; waiting for a dispatcher to load the ' +
          `scripts again (${e.message})`,
      );
      error.cause = e;
      throw error;
    }
  }
}

function isNoPerm(error) {
  return Boolean(error && typeof error.message === 'string' && error.message.startsWith('NOPERM'));
}

function isNoScript(error) {
  return Boolean(error && typeof error.message === 'string' && error.message.startsWith('NOSCRIPT'));
}

const SCRIPT_NAMES = ['complete', 'take', 'leave', 'give_back', 'beat'];

// One Script object per name, loaded once per process.
const scripts = {
  complete: new Script('complete'), // report tasks; also moves a message between two lists
  take: new Script('take'), // take up to N tasks without blocking
  leave: new Script('leave'), // sign off
  giveBack: new Script('give_back'), // everything in hand back to the ready list
  beat: new Script('beat'), // the heartbeat of one incarnation of a worker id
};

module.exports = { Script, scripts, isNoScript, SCRIPT_NAMES };
