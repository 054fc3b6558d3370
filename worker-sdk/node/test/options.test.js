'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { validated, longestBlock, defaultWorkerId } = require('../lib/options');
const { RowpumpError } = require('../lib/errors');
const { keySlot, crc16 } = require('../lib/cluster_slot');

test('defaults follow the C++ SDK', () => {
  const o = validated({ queue: 'users' });
  assert.equal(o.concurrency, 1);
  assert.equal(o.batch, 0);
  assert.equal(o.heartbeatTtl, 10000);
  assert.equal(o.heartbeatInterval, 3333);
  assert.equal(o.queueWait, 30000);
  assert.equal(o.fetchTimeout, 1000);
  assert.equal(o.timeout, 0);
  assert.match(o.workerId, /^[A-Za-z0-9_-]+-\d+-[0-9a-f]{6}$/);
  assert.match(defaultWorkerId(), /^[A-Za-z0-9_.-]{1,64}$/);
});

test('bad options are refused with what is wrong', () => {
  const cases = [
    [{}, /queue is required/],
    [{ queue: 'a b' }, /queue 'a b' must be 1 to 64 characters/],
    [{ queue: 'q', workerId: 'x/y' }, /workerId 'x\/y'/],
    [{ queue: 'q', concurrency: 0 }, /concurrency must be between 1 and 1024/],
    [{ queue: 'q', batch: 1001 }, /batch must be 0 \(adaptive\) or between 1 and 1000/],
    [{ queue: 'q', heartbeatTtl: 100 }, /heartbeatTtl must be at least 200 ms/],
    [{ queue: 'q', heartbeatInterval: 20000 }, /shorter than heartbeatTtl/],
    [{ queue: 'q', fetchTimeout: 0 }, /fetchTimeout must be a positive/],
    [{ queue: 'q', timeout: -1 }, /timeout must be 0/],
    [{ queue: 'q', threads: 4 }, /unknown option 'threads'/],
    [{ queue: 'q', redis: { sentinels: [{ host: 'a', port: 1 }] } }, /needs redis.name/],
  ];
  for (const [options, message] of cases) {
    assert.throws(() => validated(options), (e) => e instanceof RowpumpError && message.test(e.message), JSON.stringify(options));
  }
});

test('a fetch never blocks longer than half of what the heartbeat has left', () => {
  assert.equal(longestBlock(10000, 3333), 3333);
  assert.equal(longestBlock(300, 290), 10);
});

test('cluster slots as Redis computes them', () => {
  assert.equal(crc16(Buffer.from('123456789')), 0x31c3);
  assert.equal(keySlot('foo'), 12182);
  assert.equal(keySlot('rowpump:{users}:ready'), keySlot('users'));
  assert.equal(keySlot('a{}b'), keySlot('a{}b'));
});
