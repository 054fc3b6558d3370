'use strict';
// The conformance worker's flags: exit 2 on bad ones, exit 1 when the worker fails.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const PROGRAM = path.join(__dirname, '..', 'conformance-worker.js');

function run(...args) {
  return spawnSync(process.execPath, [PROGRAM, ...args], { encoding: 'utf8', timeout: 30000 });
}

test('bad flags exit 2 naming the problem', () => {
  const cases = [
    [['--bogus', '1'], /unknown flag --bogus/],
    [['--queue'], /missing value after --queue/],
    [['--fail-mode', 'explode'], /--fail-mode takes none, retry, fail, throw, hang/],
    [['--value', 'status'], /--value takes NAME=VALUE/],
    [['--threads', 'two'], /--threads takes a whole number/],
    [['--sentinel', 'h:1'], /--sentinel needs --sentinel-master/],
    [['--cluster', 'nohost'], /--cluster takes HOST:PORT/],
  ];
  for (const [args, message] of cases) {
    const r = run(...args);
    assert.equal(r.status, 2, args.join(' '));
    assert.match(r.stderr, message);
  }
});

test('options the worker refuses exit 1', () => {
  const r = run('--queue', 'not a name');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /invalid worker options: queue 'not a name'/);
});
