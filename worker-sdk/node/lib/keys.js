'use strict';
// The Redis keys of a queue (common/src/keys.cpp), all with the hash tag {queue}, and the two
// that are one worker's own.

function queueKeys(queue) {
  const prefix = `rowpump:{${queue}}:`;
  return {
    prefix,
    ready: prefix + 'ready',
    done: prefix + 'done',
    bad: prefix + 'bad',
    workers: prefix + 'workers',
    meta: prefix + 'meta',
    nudge: prefix + 'nudge',
  };
}

function workerKeys(queue, workerId) {
  const keys = queueKeys(queue);
  return {
    ...keys,
    processing: `${keys.prefix}processing:${workerId}`, // the tasks this worker has in hand
    heartbeat: `${keys.prefix}heartbeat:${workerId}`, // alive while this worker is
  };
}

module.exports = { queueKeys, workerKeys };
