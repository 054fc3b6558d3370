'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { runHandler, taskDeadline } = require('../lib/handler_run');
const { ok, Outcome } = require('../lib/outcome');

const task = (fields = {}) => ({ id: '1', fields, signal: undefined });

test('a throw or a rejection is a retry with the error message as reason', async () => {
  assert.deepEqual(await runHandler(() => { throw new Error('boom'); }, task(), 0), new Outcome('retry', { reason: 'boom' }));
  assert.equal((await runHandler(async () => Promise.reject(new TypeError('bad')), task(), 0)).reason, 'bad');
  assert.equal((await runHandler(async () => { throw 'text'; }, task(), 0)).reason, 'the handler threw text'); // eslint-disable-line no-throw-literal
});

test('within the deadline the handler decides', async () => {
  const t = task();
  const outcome = await runHandler(async () => ok({ status: '1' }), t, 1000);
  assert.equal(outcome.verb, 'ok');
  assert.equal(t.signal.aborted, false);
});

test('past the deadline: a retry with reason timeout, the signal aborted, the late answer ignored', async () => {
  const t = task();
  let finishLate;
  const late = new Promise((resolve) => { finishLate = resolve; });
  const outcome = await runHandler(() => late, t, 30);
  assert.equal(outcome.verb, 'retry');
  assert.equal(outcome.reason, 'timeout');
  assert.equal(t.signal.aborted, true);
  finishLate(ok({ status: '1' })); // nothing left to resolve: runHandler has answered once
  const rejected = await runHandler(() => new Promise((_, reject) => setTimeout(() => reject(new Error('late')), 60)), task(), 10);
  assert.equal(rejected.reason, 'timeout');
  await new Promise((resolve) => setTimeout(resolve, 80)); // the late rejection is handled, not unhandled
});

test("a handler that watches task.signal ends when it is aborted", async () => {
  const t = task();
  const outcome = await runHandler((x) => new Promise((_, reject) => {
    x.signal.addEventListener('abort', () => reject(x.signal.reason));
  }), t, 20);
  assert.equal(outcome.reason, 'timeout');
});

test("a task's field timeout_ms overrides the worker's timeout", () => {
  assert.deepEqual(taskDeadline(task(), 500), { ms: 500 });
  assert.deepEqual(taskDeadline(task({ timeout_ms: '250' }), 500), { ms: 250 });
  assert.deepEqual(taskDeadline(task({ timeout_ms: '250' }), 0), { ms: 250 });
  assert.deepEqual(taskDeadline(task({ timeout_ms: null }), 500), { ms: 500 });
  for (const bad of ['0', '-1', '1.5', 'x', '']) {
    const d = taskDeadline(task({ timeout_ms: bad }), 500);
    assert.equal(d.ms, 500, bad);
    assert.match(d.problem, /not a positive number of milliseconds/);
  }
});
