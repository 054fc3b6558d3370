'use strict';
// Durations as the protocol writes them (common/src/duration.cpp): "250ms", "30s", "1m",
// "2h", or sums of them ("1m30s").

const UNITS = { ms: 1, s: 1000, m: 60 * 1000, h: 60 * 60 * 1000 };
const MAX_MS = Math.floor(Number.MAX_SAFE_INTEGER / 1000);

// Milliseconds, or null when `text` is not a duration.
function parseDuration(text) {
  if (typeof text !== 'string' || text === '') return null;
  let total = 0;
  const re = /([0-9]*)([^0-9]*)/gy;
  let match;
  while (re.lastIndex < text.length && (match = re.exec(text))) {
    const [, digits, unit] = match;
    const scale = UNITS[unit];
    if (digits === '' || scale === undefined) return null;
    const number = Number(digits);
    if (number > MAX_MS / scale) return null;
    total += number * scale;
    if (total > MAX_MS) return null;
  }
  return total;
}

// The largest unit that divides `ms` exactly: 60000 -> "1m", 1500 -> "1500ms".
function formatDuration(ms) {
  if (ms !== 0 && ms % UNITS.h === 0) return `${ms / UNITS.h}h`;
  if (ms !== 0 && ms % UNITS.m === 0) return `${ms / UNITS.m}m`;
  if (ms !== 0 && ms % UNITS.s === 0) return `${ms / UNITS.s}s`;
  return `${ms}ms`;
}

// BLMOVE takes its timeout in seconds: 1500 -> "1.500".
function secondsText(ms) {
  return `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}`;
}

module.exports = { parseDuration, formatDuration, secondsText };
