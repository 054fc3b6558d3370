'use strict';
// What a worker says about itself in its heartbeat key's value, for the dispatcher's workers
// view (`rowpump status`, the dashboard): host=<h>;lang=node;version=<v>;done=<n>;ttl=<ms>,
// values percent-encoded. Display only; see common/include/rowpump/common/protocol/worker_info.hpp.

const os = require('os');
const { percentEncode } = require('./messages');
const { version } = require('../package.json');

const MAX_TEXT = 64;

function formatWorkerInfo(done, ttlMs) {
  const fields = [['host', os.hostname()], ['lang', 'node'], ['version', version],
    ['done', String(done)], ['ttl', String(ttlMs)]];
  return fields.map(([name, value]) => `${name}=${percentEncode(Buffer.from(value, 'utf8').subarray(0, MAX_TEXT))}`).join(';');
}

module.exports = { formatWorkerInfo };
