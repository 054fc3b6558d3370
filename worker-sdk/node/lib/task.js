'use strict';
// The task a handler gets: id (decoded), rawId (its bytes), token, attempt (1 on the first
// try), fields (what the ready message carried after the token) and signal (aborted when
// the handler's deadline passes). What the worker needs to report on it stays out of sight.

const MESSAGE = Symbol('rowpump ready message');
const HEAD = Symbol('rowpump done message head');

function makeTask(parsed) {
  const task = {
    id: parsed.id,
    rawId: parsed.rawId,
    token: parsed.token,
    attempt: parsed.attempt,
    fields: parsed.fields,
    signal: undefined,
  };
  Object.defineProperty(task, MESSAGE, { value: parsed.message });
  Object.defineProperty(task, HEAD, { value: parsed.head });
  return task;
}

// The ready message verbatim (a Buffer), as the processing list holds it.
function readyMessage(task) {
  return task[MESSAGE];
}

// "<encoded id>:<token>": what a done message about the task starts with.
function doneHead(task) {
  return task[HEAD];
}

module.exports = { makeTask, readyMessage, doneHead };
