'use strict';
// rowpump-worker: the Node.js worker SDK for rowpump (README.md beside this file).

const { RowpumpError } = require('./lib/errors');
const { Outcome, ok, retry, fail } = require('./lib/outcome');
const { Worker } = require('./lib/worker');
const { Nudger, nudge } = require('./lib/nudge');
const { TIMEOUT_REASON } = require('./lib/handler_run');

const { PROTOCOL_VERSION } = require('./lib/protocol_version');

module.exports = {
  Worker, ok, retry, fail, Outcome, nudge, Nudger, RowpumpError, TIMEOUT_REASON, PROTOCOL_VERSION,
};
