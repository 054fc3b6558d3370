'use strict';
// index.d.ts against a typed example (must compile) and typed mistakes (must not), with the
// TypeScript pinned in package-lock.json.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const TSC = path.join(__dirname, '..', 'node_modules', 'typescript', 'bin', 'tsc');
const TYPES = path.join(__dirname, 'types');

function tsc(...args) {
  return spawnSync(process.execPath, [TSC, ...args], { encoding: 'utf8', timeout: 120000 });
}

test('the typed example compiles against index.d.ts', () => {
  const r = tsc('-p', TYPES);
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('index.d.ts catches wrong option types, field types and handler results', () => {
  const r = tsc('--noEmit', '--strict', '--types', 'node', path.join(TYPES, 'wrong.ts'));
  assert.notEqual(r.status, 0);
  assert.match(r.stdout, /wrong\.ts\(4,\d+\): error TS2322/); // concurrency: '8'
  assert.match(r.stdout, /wrong\.ts\(5,\d+\): error TS2345/); // the handler returns no Outcome
  assert.match(r.stdout, /wrong\.ts\(6,\d+\): error TS2322/); // attempt is a number
});
