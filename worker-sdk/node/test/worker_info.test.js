'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const os = require('os');
const { formatWorkerInfo } = require('../lib/worker_info');
const { percentEncode } = require('../lib/messages');
const { version } = require('../package.json');

test('the heartbeat value says who the worker is', () => {
  assert.equal(formatWorkerInfo(12, 10000),
    `host=${percentEncode(os.hostname())};lang=node;version=${version};done=12;ttl=10000`);
});
