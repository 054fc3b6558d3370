'use strict';
// Text from outside (a message from Redis, an error) made safe for a log line, as
// common/src/log_text.cpp does: control characters, stray bytes and backslashes escaped,
// cut at `maxBytes` with the original length.

const LOG_TEXT_BYTES = 200;

function escapedChar(ch) {
  if (ch === '\\') return '\\\\';
  if (ch === '\n') return '\\n';
  if (ch === '\r') return '\\r';
  if (ch === '\t') return '\\t';
  const code = ch.codePointAt(0);
  if (code < 0x20 || code === 0x7f || (code >= 0x80 && code < 0xa0)) {
    return [...Buffer.from(ch, 'utf8')].map((b) => '\\x' + b.toString(16).toUpperCase().padStart(2, '0')).join('');
  }
  return ch;
}

// `text`: a string, or a Buffer (bytes that are not UTF-8 are shown as \xNN).
function logText(text, maxBytes = LOG_TEXT_BYTES) {
  let pieces;
  if (Buffer.isBuffer(text)) {
    const decoded = new TextDecoder('utf-8', { fatal: false }).decode(text);
    // U+FFFD stands for bytes that were not UTF-8 (or for itself): show the bytes instead.
    pieces = Buffer.from(decoded, 'utf8').equals(text) ? [...decoded].map(escapedChar)
      : [...text.toString('latin1')].map((c) => (c.charCodeAt(0) >= 0x80 ? '\\x' + c.charCodeAt(0).toString(16).toUpperCase() : escapedChar(c)));
  } else {
    pieces = [...String(text)].map(escapedChar);
  }
  let out = '';
  let bytes = 0;
  for (const piece of pieces) {
    const size = Buffer.byteLength(piece, 'utf8');
    if (bytes + size > maxBytes) {
      const total = Buffer.isBuffer(text) ? text.length : Buffer.byteLength(String(text), 'utf8');
      return `${out}... (${total} bytes)`;
    }
    out += piece;
    bytes += size;
  }
  return out;
}

module.exports = { logText, LOG_TEXT_BYTES };
