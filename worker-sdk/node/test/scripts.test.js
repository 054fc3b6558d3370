'use strict';
// Each Lua script the worker runs is the C++ SDK's, to the character: the constants of
// common/src/scripts.cpp (kCompleteScript -> lua/complete.lua), or common/lua/<name>.lua
// once they live there.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Script, SCRIPT_NAMES } = require('../lib/scripts');

const ROOT = process.env.ROWPUMP_SOURCE_DIR || path.join(__dirname, '..', '..', '..');

// name -> text, from whichever place holds the C++ side's scripts.
function cppScripts() {
  const found = {};
  const luaDir = path.join(ROOT, 'common', 'lua');
  if (fs.existsSync(luaDir)) {
    for (const file of fs.readdirSync(luaDir).filter((f) => f.endsWith('.lua'))) {
      found[path.basename(file, '.lua')] = fs.readFileSync(path.join(luaDir, file), 'utf8');
    }
  }
  const cppFile = path.join(ROOT, 'common', 'src', 'scripts.cpp');
  if (fs.existsSync(cppFile)) {
    const source = fs.readFileSync(cppFile, 'utf8');
    const constant = /const\s+char\s*\*\s*const\s+k(\w+)Script\s*=\s*R"lua\(([\s\S]*?)\)lua"\s*;/g;
    for (const [, camel, body] of source.matchAll(constant)) {
      const name = camel.replace(/(?!^)([A-Z])/g, '_$1').toLowerCase();
      // The raw string starts on the line after R"lua( : that newline is layout, not script.
      found[name] ??= body.replace(/^\n/, '');
    }
  }
  return found;
}

test('each script of the worker is the C++ source text of the same script', () => {
  const cpp = cppScripts();
  for (const name of SCRIPT_NAMES) {
    assert.ok(cpp[name] !== undefined, `no C++ script '${name}' in common/src/scripts.cpp or common/lua/`);
    assert.equal(new Script(name).body, cpp[name], `lua/${name}.lua differs from the C++ script`);
  }
});

test('the C++ scripts are found: the parser is not silently empty', () => {
  const cpp = cppScripts();
  assert.ok(Object.keys(cpp).length >= SCRIPT_NAMES.length);
  assert.match(cpp.complete, /redis\.call\('LREM', KEYS\[1\], 1, ARGV\[i\]\)/);
});

test('NOSCRIPT and a refused EVAL give an error that says the worker waits for a dispatcher', async () => {
  const calls = [];
  const connection = {
    async command(argv) {
      calls.push(argv[0]);
      if (argv[0] === 'EVALSHA') throw new Error('NOSCRIPT No matching script. Please use EVAL.');
      throw new Error("NOPERM this user has no permissions to run the 'eval' command");
    },
  };
  await assert.rejects(new Script('complete').run(connection, ['p', 'd'], ['m', 'm ok']), (e) => {
    assert.match(e.message, /complete\.lua .* may not run EVAL; waiting for a dispatcher to load/);
    assert.match(e.cause.message, /^NOPERM/);
    return true;
  });
  assert.deepEqual(calls, ['EVALSHA', 'EVAL']);
});
