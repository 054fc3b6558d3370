'use strict';
// The protocol version (common/include/rowpump/common/protocol/protocol_version.hpp): the ready
// and done messages, key names and scripts this SDK speaks, and the rule it applies to the
// version a dispatcher publishes in the queue's meta hash (docs/protocol.md "Protocol version").

const { logText } = require('./log_text');

// The version this SDK speaks; equal to kProtocolVersion (a unit test checks it).
const PROTOCOL_VERSION = 1;
// What a dispatcher that publishes no `protocol` field speaks.
const UNPUBLISHED_VERSION = 1;

function parse(text) {
  return /^[0-9]{1,9}$/.test(text) ? Number(text) : null;
}

// '' when a worker of version `own` may work for a dispatcher that published `published`
// (null: no field), else why not, in the C++ SDK's words.
function protocolMismatch(published, own = PROTOCOL_VERSION) {
  const theirs = published === null || published === undefined ? UNPUBLISHED_VERSION : parse(published);
  if (theirs === own) return '';
  const dispatcher = theirs !== null
    ? `protocol version ${theirs}`
    : `an unreadable protocol version '${logText(published, 40)}'`;
  return `the dispatcher speaks ${dispatcher}, this worker protocol version ${own}; run a ` +
    'worker and a dispatcher of the same protocol version (docs/upgrading.md); no task was taken';
}

module.exports = { PROTOCOL_VERSION, protocolMismatch };
