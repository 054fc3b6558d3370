'use strict';
// The protocol version rule, and that the SDK speaks the version the C++ side defines.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { PROTOCOL_VERSION, protocolMismatch } = require('../lib/protocol_version');

const ROOT = path.resolve(__dirname, '../../..');

test('the version equals the C++ kProtocolVersion', () => {
  const header = fs.readFileSync(
    path.join(ROOT, 'common/include/rowpump/common/protocol/protocol_version.hpp'), 'utf8');
  const match = /kProtocolVersion\s*=\s*(\d+)/.exec(header);
  assert.ok(match);
  assert.strictEqual(PROTOCOL_VERSION, Number(match[1]));
  assert.strictEqual(require('..').PROTOCOL_VERSION, PROTOCOL_VERSION);
});

test('a dispatcher of the own version, or of none, is served', () => {
  assert.strictEqual(protocolMismatch(String(PROTOCOL_VERSION)), '');
  assert.strictEqual(protocolMismatch(null), '');
});

test('another or an unreadable version is refused, naming both', () => {
  assert.match(protocolMismatch('999'), /protocol version 999, this worker protocol version 1/);
  assert.match(protocolMismatch('999'), /no task was taken/);
  assert.match(protocolMismatch('x\n'), /unreadable protocol version 'x\\n'/);
  assert.notStrictEqual(protocolMismatch(''), '');
});
