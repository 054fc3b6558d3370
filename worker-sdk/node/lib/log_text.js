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
    return [...Buffer.from(ch, 'utf8')].map(hexEscape).join('');
  }
  return ch;
}

function hexEscape(byte) {
  return '\\x' + byte.toString(16).toUpperCase().padStart(2, '0');
}

// The characters of `text` (a string, or a Buffer: bytes that are not UTF-8 show as \xNN),
// each escaped.
function escapedPieces(text) {
  if (!Buffer.isBuffer(text)) return [...String(text)].map(escapedChar);
  try {
    return [...new TextDecoder('utf-8', { fatal: true }).decode(text)].map(escapedChar);
  } catch {
    return [...text].map((byte) => (byte < 0x80 ? escapedChar(String.fromCharCode(byte)) : hexEscape(byte)));
  }
}

function logText(text, maxBytes = LOG_TEXT_BYTES) {
  const pieces = escapedPieces(text);
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
