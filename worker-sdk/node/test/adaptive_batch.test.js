'use strict';
// The cases of tests/unit/test_adaptive_batch.cpp, in milliseconds.
const test = require('node:test');
const assert = require('node:assert/strict');
const { AdaptiveBatch, DEFAULT_LIMIT } = require('../lib/adaptive_batch');

const US = 0.001;

function rounds(batch, count, perTask, roundTrip, waiting) {
  for (let i = 0; i < count; ++i) {
    const asked = batch.next;
    const got = Math.min(asked, waiting);
    batch.fetched(asked, got, roundTrip);
    batch.handled(got, got * perTask);
  }
}

test('the adaptive batch starts at one task', () => {
  const batch = new AdaptiveBatch();
  assert.equal(batch.next, 1);
  batch.fetched(1, 1, 200 * US);
  assert.equal(batch.next, 1);
});

test('fast handlers on a long ready list double the batch up to its limit', () => {
  const batch = new AdaptiveBatch(64);
  batch.handled(1, US);
  let previous = batch.next;
  for (const expected of [2, 4, 8, 16, 32, 64, 64]) {
    batch.fetched(previous, previous, 200 * US);
    batch.handled(previous, previous * US);
    assert.equal(batch.next, expected);
    previous = batch.next;
  }
});

test('a slow handler brings the batch back to one at once', () => {
  const batch = new AdaptiveBatch();
  rounds(batch, 10, US, 200 * US, 1000);
  assert.equal(batch.next, DEFAULT_LIMIT);
  batch.handled(16, 16 * 10);
  assert.equal(batch.next, 1);
  rounds(batch, 10, 10, 200 * US, 1000);
  assert.equal(batch.next, 1);
});

test("a batch's handlers together take no longer than a round trip", () => {
  for (const perTask of [1, 10, 25, 50, 99, 150].map((n) => n * US)) {
    const batch = new AdaptiveBatch();
    rounds(batch, 20, perTask, 200 * US, 1000);
    assert.ok(batch.next * perTask <= 200 * US + 1e-9, `handler ${perTask} ms: batch ${batch.next}`);
    assert.ok(batch.next >= 1);
  }
  const batch = new AdaptiveBatch();
  rounds(batch, 20, 50 * US, 200 * US, 1000);
  assert.equal(batch.next, 4);
});

test('a short ready list keeps the batch near what it holds', () => {
  const batch = new AdaptiveBatch();
  rounds(batch, 20, US, 200 * US, 1000);
  assert.equal(batch.next, DEFAULT_LIMIT);
  rounds(batch, 1, US, 200 * US, 3);
  assert.equal(batch.next, 3);
  rounds(batch, 20, US, 200 * US, 3);
  assert.ok(batch.next <= 6);
  rounds(batch, 1, US, 200 * US, 0);
  assert.equal(batch.next, 1);
});
