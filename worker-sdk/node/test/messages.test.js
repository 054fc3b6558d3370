'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const m = require('../lib/messages');

test('percent-encoding: unreserved bytes stay, the rest become %XX in upper case', () => {
  assert.equal(m.percentEncode('a-b.c_d~9'), 'a-b.c_d~9');
  assert.equal(m.percentEncode('a b:c=d%'), 'a%20b%3Ac%3Dd%25');
  assert.equal(m.percentEncode('é'), '%C3%A9');
  assert.equal(m.percentEncode(Buffer.from([0, 255])), '%00%FF');
  assert.deepEqual(m.percentDecode('a%20b%c3%A9'), Buffer.from('a bé'));
  for (const bad of ['a b', 'a:b', 'a=b', '%', '%2', '%G0']) assert.equal(m.percentDecode(bad), null, bad);
});

test('a ready message without fields parses as today', () => {
  const { task, error } = m.parseReady(Buffer.from('42:7F3A9C01D2E4B5A6-1-2A'));
  assert.equal(error, undefined);
  assert.equal(task.id, '42');
  assert.deepEqual(task.rawId, Buffer.from('42'));
  assert.equal(task.token, '7F3A9C01D2E4B5A6-1-2A');
  assert.equal(task.attempt, 1);
  assert.deepEqual({ ...task.fields }, {});
  assert.equal(task.head, '42:7F3A9C01D2E4B5A6-1-2A');
});

test('non-UTF-8 field bytes decode as U+FFFD, never an error', () => {
  // A BLOB payload column's bytes are whatever the row holds.
  const { task, error } = m.parseReady('7:0123456789ABCDEF-1-7 data=%00%FF%80%3A%25 name=Zo%C3%AB%20%E6%97%A5');
  assert.equal(error, undefined);
  assert.equal(task.fields.data, '\u0000\ufffd\ufffd:%');
  assert.equal(task.fields.name, 'Zo\u00eb \u65e5');
});

test('ids are percent-decoded and split at the last colon', () => {
  const { task } = m.parseReady('a%3Ab%20c:0123456789ABCDEF-12-FF');
  assert.equal(task.id, 'a:b c');
  assert.equal(task.attempt, 12);
  const bytes = m.parseReady(Buffer.from('%FF%00:0123456789ABCDEF-1-1')).task;
  assert.deepEqual(bytes.rawId, Buffer.from([0xff, 0]));
});

test('fields after the token: name=value percent-decoded, a bare name is NULL', () => {
  const { task } = m.parseReady('7:0123456789ABCDEF-3-7 timeout_ms=250 note=a%20b%C3%A9 empty= gone');
  assert.deepEqual({ ...task.fields }, { timeout_ms: '250', note: 'a bé', empty: '', gone: null });
  assert.equal(task.head, '7:0123456789ABCDEF-3-7');
  assert.equal(task.attempt, 3);
});

test('malformed ready messages say what is wrong', () => {
  const cases = {
    'no-colon': "no ':' between id and token",
    ':0123456789ABCDEF-1-1': "invalid id ''",
    'a b:0123456789ABCDEF-1-1': "no ':' between id and token",
    '1:0123456789abcdef-1-1': "invalid token '0123456789abcdef-1-1'",
    '1:0123456789ABCDEF-0-1': "invalid token '0123456789ABCDEF-0-1'",
    '1:0123456789ABCDEF-1-': "invalid token '0123456789ABCDEF-1-'",
    '1:0123456789ABCDEF-1-1 9x=1': "invalid field name '9x'",
    '1:0123456789ABCDEF-1-1  a=1': "invalid field name ''",
    '1:0123456789ABCDEF-1-1 a=%2': "invalid percent-encoding in field 'a'",
    '1:0123456789ABCDEF-1-1 a=1 a=2': "field 'a' given twice",
  };
  for (const [message, error] of Object.entries(cases)) {
    assert.equal(m.parseReady(message).error, error, message);
  }
  assert.match(m.parseReady(Buffer.alloc(m.MAX_MESSAGE_BYTES + 1, 'a')).error, /longer than 65536 bytes/);
});

test('tokens: 16 hex digits, an attempt without a leading zero, the row in hex', () => {
  assert.ok(m.isValidToken('0123456789ABCDEF-1-0'));
  assert.ok(m.isValidToken('0123456789ABCDEF-123456789-ABC'));
  assert.ok(!m.isValidToken('0123456789ABCDEF-1234567890-A'));
  assert.ok(!m.isValidToken('0123456789ABCDE-1-A'));
  assert.ok(!m.isValidToken('0123456789ABCDEF-1-' + 'A'.repeat(200)));
});

test('done messages as the README writes them', () => {
  const head = '42:7F3A9C01D2E4B5A6-1-2A';
  assert.equal(m.formatDone({ head, verb: 'ok', values: [['status', '2']] }), `${head} ok status=2`);
  assert.equal(m.formatDone({ head, verb: 'retry', reason: 'upstream down', delayMs: 30000 }),
    `${head} retry reason=upstream%20down delay=30s`);
  assert.equal(m.formatDone({ head, verb: 'retry', reason: '' }), `${head} retry`);
  assert.equal(m.formatDone({ head, verb: 'fail', reason: 'gone' }), `${head} fail reason=gone`);
  assert.equal(m.formatDone({ head, verb: 'extend', leaseMs: 600000 }), `${head} extend lease=10m`);
  assert.equal(m.formatDone({ head, verb: 'retry', delayMs: 1500 }), `${head} retry delay=1500ms`);
  assert.equal(m.formatDone({ head, verb: 'ok', values: [['status', '2']], handlerMs: 12.7 }),
    `${head} ok status=2 ms=12`);
  assert.equal(m.formatDone({ head, verb: 'extend', leaseMs: 1000, handlerMs: 5 }), `${head} extend lease=1s`);
});

test('formatReady writes what parseReady reads', () => {
  const text = m.formatReady(Buffer.from('a b'), '0123456789ABCDEF-1-1', { x: 'y z', n: null });
  assert.equal(text, 'a%20b:0123456789ABCDEF-1-1 x=y%20z n');
  assert.deepEqual({ ...m.parseReady(text).task.fields }, { x: 'y z', n: null });
});

test('reasons are clipped to 1000 bytes, never inside a UTF-8 sequence', () => {
  assert.equal(m.clipReason('short'), 'short');
  const long = 'é'.repeat(600); // 1200 bytes
  const clipped = m.clipReason(long);
  assert.ok(Buffer.byteLength(clipped) <= 1000);
  assert.ok(clipped.endsWith('...'));
  assert.ok(!clipped.includes('\uFFFD'));
  assert.equal(m.clipReason('abcdef', 5), 'ab...');
  assert.equal(m.clipReason('abcdef', 2), '..');
  assert.equal(m.clipReason('\uD800x'), '\uFFFDx'); // a lone surrogate is no UTF-8
});

test('names: queues and workers [A-Za-z0-9_.-]{1,64}, values [A-Za-z_][A-Za-z0-9_]{0,63}', () => {
  assert.ok(m.isValidName('user_block-check.1'));
  assert.ok(!m.isValidName(''));
  assert.ok(!m.isValidName('a'.repeat(65)));
  assert.ok(!m.isValidName('a b'));
  assert.ok(m.isValidValueName('_status9'));
  assert.ok(!m.isValidValueName('9status'));
  assert.ok(!m.isValidValueName('a-b'));
});
