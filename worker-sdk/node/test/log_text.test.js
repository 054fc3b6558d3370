'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { logText } = require('../lib/log_text');

test('log text: controls, backslashes and stray bytes escaped, UTF-8 kept', () => {
  assert.equal(logText('a\nb\\c\x01\x7fé'), 'a\\nb\\\\c\\x01\\x7Fé');
  assert.equal(logText('\u0085'), '\\xC2\\x85'); // a C1 control
  assert.equal(logText(Buffer.from([0x61, 0xff, 0x0a])), 'a\\xFF\\n');
  assert.equal(logText(Buffer.from('ok é')), 'ok é');
});

test('log text is cut with the original length', () => {
  assert.equal(logText('x'.repeat(300)), 'x'.repeat(200) + '... (300 bytes)');
  assert.equal(logText('\x01'.repeat(10), 10), '\\x01\\x01... (10 bytes)');
});
