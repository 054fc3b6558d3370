'use strict';
// The messages of the wire protocol (docs/protocol.md; common/src/messages.cpp is the
// C++ side): ready messages (dispatcher -> worker) and done messages (worker -> dispatcher).
//
// Ready message: `<id>:<token>[ <name>=<value>]...`. The id and the field values are
// percent-encoded; a bare `<name>` (no `=`) is a field whose value is NULL. The fields are
// what a future dispatcher may send along (a payload); a worker ignores those it does not know.
//
// Messages are handled as Buffers (their bytes, whatever they are) and parsed through a
// latin1 string, one character per byte, so a malformed message can be moved aside verbatim.

const { formatDuration } = require('./duration');

const MAX_MESSAGE_BYTES = 64 * 1024;
const BATCH_PREFIX_LENGTH = 17; // 16 hex digits and the dash
const MAX_REASON_BYTES = 1000;

function isUnreserved(c) {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) ||
    c === 0x2d || c === 0x2e || c === 0x5f || c === 0x7e;
}

// Bytes outside [A-Za-z0-9-._~] become %XX (upper-case hex). Strings are taken as UTF-8.
function percentEncode(raw) {
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw), 'utf8');
  let out = '';
  for (const c of bytes) {
    out += isUnreserved(c) ? String.fromCharCode(c) : '%' + c.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

function hexValue(ch) {
  if (ch >= '0' && ch <= '9') return ch.charCodeAt(0) - 48;
  if (ch >= 'A' && ch <= 'F') return ch.charCodeAt(0) - 55;
  if (ch >= 'a' && ch <= 'f') return ch.charCodeAt(0) - 87;
  return -1;
}

// The bytes `encoded` (a latin1 string) stands for, or null when it is not percent-encoding:
// a raw space, ':' or '=', or a '%' without two hex digits.
function percentDecode(encoded) {
  const out = [];
  for (let i = 0; i < encoded.length; ++i) {
    const ch = encoded[i];
    if (ch !== '%') {
      if (ch === ' ' || ch === ':' || ch === '=') return null;
      out.push(encoded.charCodeAt(i) & 0xff);
      continue;
    }
    if (i + 2 >= encoded.length) return null;
    const hi = hexValue(encoded[i + 1]);
    const lo = hexValue(encoded[i + 2]);
    if (hi < 0 || lo < 0) return null;
    out.push(hi * 16 + lo);
    i += 2;
  }
  return Buffer.from(out);
}

// Queue names and worker ids: [A-Za-z0-9_.-]{1,64}.
function isValidName(name) {
  return typeof name === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(name);
}

// Names of values ("ok") and of ready message fields: [A-Za-z_][A-Za-z0-9_]*, at most 64.
function isValidValueName(name) {
  return typeof name === 'string' && /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name);
}

// "<16 upper-case hex digits>-<attempt>-<upper-case hex>", the attempt 1 to 9 digits, no
// leading zero; at most 200 characters.
function isValidToken(token) {
  return token.length <= 200 && /^[0-9A-F]{16}-[1-9][0-9]{0,8}-[0-9A-F]+$/.test(token);
}

function tokenAttempt(token) {
  const rest = token.slice(BATCH_PREFIX_LENGTH);
  return parseInt(rest.slice(0, rest.indexOf('-')), 10);
}

// Parses a ready message (a Buffer or a string). Returns {task} or {error}. The task:
//   id       the row id, decoded (UTF-8)     rawId    its bytes
//   token    the claim token                 attempt  1 on the first try
//   fields   {name: value or null}           message  the message verbatim (a Buffer)
//   head     "<encoded id>:<token>", what a done message starts with
function parseReady(message) {
  const bytes = Buffer.isBuffer(message) ? message : Buffer.from(message, 'utf8');
  if (bytes.length > MAX_MESSAGE_BYTES) {
    return { error: `message longer than ${MAX_MESSAGE_BYTES} bytes` };
  }
  const text = bytes.toString('latin1');
  const parts = text.split(' ');
  const head = parts[0];
  const colon = head.lastIndexOf(':');
  if (colon < 0) return { error: "no ':' between id and token" };
  const rawId = percentDecode(head.slice(0, colon));
  if (!rawId || rawId.length === 0) return { error: `invalid id '${head.slice(0, colon)}'` };
  const token = head.slice(colon + 1);
  if (!isValidToken(token)) return { error: `invalid token '${token}'` };
  const fields = Object.create(null);
  for (const field of parts.slice(1)) {
    const eq = field.indexOf('=');
    const name = eq < 0 ? field : field.slice(0, eq);
    if (!isValidValueName(name)) return { error: `invalid field name '${name}'` };
    if (name in fields) return { error: `field '${name}' given twice` };
    if (eq < 0) {
      fields[name] = null;
      continue;
    }
    const value = percentDecode(field.slice(eq + 1));
    if (!value) return { error: `invalid percent-encoding in field '${name}'` };
    fields[name] = value.toString('utf8');
  }
  return {
    task: {
      id: rawId.toString('utf8'),
      rawId,
      token,
      attempt: tokenAttempt(token),
      fields,
      message: bytes,
      head,
    },
  };
}

// The ready message of a task as its fields would be written: for logs and tests.
function formatReady(rawId, token, fields = {}) {
  let out = percentEncode(rawId) + ':' + token;
  for (const [name, value] of Object.entries(fields)) {
    out += ' ' + name + (value === null ? '' : '=' + percentEncode(value));
  }
  return out;
}

// "<head> <verb>[ <name>=<value>]...": values, then reason, delay (retry), lease (extend).
//   done: {head, verb: 'ok'|'retry'|'fail'|'extend', values?: [[name, value]], reason?,
//          delayMs?, leaseMs?}
function formatDone(done) {
  let out = done.head + ' ' + done.verb;
  const field = (name, value) => {
    out += ' ' + name + '=' + percentEncode(value);
  };
  for (const [name, value] of done.values || []) field(name, value);
  if (done.reason) field('reason', done.reason);
  if (done.delayMs !== undefined && done.delayMs !== null) field('delay', formatDuration(done.delayMs));
  if (done.verb === 'extend') field('lease', formatDuration(done.leaseMs));
  // How long the handler ran, for the dispatcher's rowpump_handler_seconds histogram.
  if (done.handlerMs !== undefined && done.handlerMs !== null && done.verb !== 'extend') {
    field('ms', String(Math.max(0, Math.floor(done.handlerMs))));
  }
  return out;
}

// A reason as the dispatcher stores it: UTF-8 (a string always is, once encoded), cut to
// MAX_REASON_BYTES with "..." at the end, never inside a UTF-8 sequence.
function clipReason(reason, maxBytes = MAX_REASON_BYTES) {
  const bytes = Buffer.from(String(reason), 'utf8');
  if (bytes.length <= maxBytes) return bytes.toString('utf8');
  const ellipsis = '...';
  if (maxBytes < ellipsis.length) return ellipsis.slice(0, maxBytes);
  let cut = maxBytes - ellipsis.length;
  while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) --cut;
  return bytes.subarray(0, cut).toString('utf8') + ellipsis;
}

module.exports = {
  MAX_MESSAGE_BYTES,
  MAX_REASON_BYTES,
  percentEncode,
  percentDecode,
  isValidName,
  isValidValueName,
  isValidToken,
  tokenAttempt,
  parseReady,
  formatReady,
  formatDone,
  clipReason,
};
