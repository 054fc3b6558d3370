'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { parseDuration, formatDuration, secondsText } = require('../lib/duration');

test('durations parse as common/src/duration.cpp does', () => {
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration('30s'), 30000);
  assert.equal(parseDuration('1m30s'), 90000);
  assert.equal(parseDuration('2h'), 7200000);
  assert.equal(parseDuration('0ms'), 0);
  for (const bad of ['', '10', 's', '1x', '1.5s', '-1s', '1s ', '99999999999999999999h']) {
    assert.equal(parseDuration(bad), null, bad);
  }
});

test('durations format in the largest unit that divides them', () => {
  assert.equal(formatDuration(0), '0ms');
  assert.equal(formatDuration(1500), '1500ms');
  assert.equal(formatDuration(30000), '30s');
  assert.equal(formatDuration(600000), '10m');
  assert.equal(formatDuration(3600000), '1h');
  for (const ms of [0, 1, 999, 1000, 61000, 3600000, 5400000]) assert.equal(parseDuration(formatDuration(ms)), ms);
});

test('BLMOVE timeouts are seconds with three decimals', () => {
  assert.equal(secondsText(1500), '1.500');
  assert.equal(secondsText(10), '0.010');
  assert.equal(secondsText(3000), '3.000');
});
