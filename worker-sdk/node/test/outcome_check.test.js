'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { ok, retry, fail } = require('../lib/outcome');
const { DeclaredValues, parseValueNames, checkedDoneMessage, doneMessage } = require('../lib/outcome_check');
const { parseReady } = require('../lib/messages');
const { makeTask } = require('../lib/task');

const task = makeTask(parseReady('42:7F3A9C01D2E4B5A6-1-2A note=x').task);
const text = (done) => done.toString('latin1');

function declared(csv) {
  const d = new DeclaredValues('users');
  d.update(csv);
  return d;
}

test("the meta hash's values field lists the names on_success takes", () => {
  assert.deepEqual(parseValueNames('status, note ,,'), ['status', 'note']);
  assert.deepEqual(parseValueNames(''), []);
});

test('success values must be exactly the declared names', () => {
  const d = declared('status,note');
  assert.equal(d.problem(ok({ status: '1', note: 'x' })), '');
  assert.equal(d.problem(ok({ status: '1', note: 'x', extra: '1' })),
    "queue 'users': undeclared value 'extra' (queue declares: status, note)");
  assert.equal(d.problem(ok({ status: '1' })),
    "queue 'users': value 'note' is missing (on_success uses :note; queue declares: status, note)");
  assert.equal(declared('').problem(ok({ status: '1' })), "queue 'users': undeclared value 'status' (queue declares: none)");
  assert.equal(d.problem(ok({ status: null, note: 'x' })), "queue 'users': value 'status' is a null, not a string or a number");
  assert.equal(d.problem(retry('x')), '');
  assert.equal(d.problem(fail('x')), '');
});

test('done messages: the head of the ready message, never its fields', () => {
  const d = declared('status');
  assert.equal(text(checkedDoneMessage(task, ok({ status: 2 }), d)), '42:7F3A9C01D2E4B5A6-1-2A ok status=2');
  assert.equal(text(checkedDoneMessage(task, ok({ status: 2 }), d, 250)), '42:7F3A9C01D2E4B5A6-1-2A ok status=2 ms=250');
  assert.equal(text(checkedDoneMessage(task, retry('busy', 1500), d)), '42:7F3A9C01D2E4B5A6-1-2A retry reason=busy delay=1500ms');
  assert.equal(text(checkedDoneMessage(task, retry('busy', -5), d)), '42:7F3A9C01D2E4B5A6-1-2A retry reason=busy delay=0ms');
  assert.equal(text(checkedDoneMessage(task, fail('gone'), d)), '42:7F3A9C01D2E4B5A6-1-2A fail reason=gone');
});

test('an outcome that cannot be reported becomes a retry naming the problem', () => {
  const d = declared('status');
  assert.equal(text(checkedDoneMessage(task, ok({ bogus: '1' }), d)),
    '42:7F3A9C01D2E4B5A6-1-2A retry reason=queue%20%27users%27%3A%20undeclared%20value%20%27bogus%27%20%28queue%20declares%3A%20status%29');
  assert.match(text(checkedDoneMessage(task, undefined, d)), /retry reason=the%20handler%20returned%20undefined%2C%20not%20ok/);
  assert.match(text(checkedDoneMessage(task, { status: '1' }, d)), /retry reason=the%20handler%20returned%20an%20object%20%28Object%29/);
  assert.match(text(checkedDoneMessage(task, ok({ status: 'x'.repeat(70000) }), d)), /retry reason=the%20outcome%20of%20task%20%2742%27%20is%20\d+%20bytes/);
  assert.match(text(checkedDoneMessage(task, retry('x', Number.NaN), d)), /retry reason=the%20retry%20delay%20must%20be/);
});

test('doneMessage keeps the bytes of an id that is not UTF-8', () => {
  const raw = makeTask(parseReady(Buffer.from([0xff, 0x3a, 0x30, ...Buffer.from('123456789ABCDEF-1-1')])).task);
  assert.deepEqual(doneMessage(raw, fail('')), Buffer.concat([Buffer.from([0xff]), Buffer.from(':0123456789ABCDEF-1-1 fail')]));
});
