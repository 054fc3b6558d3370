'use strict';
// Running a handler on one task: a throw or a rejection is a retry with its message; past the
// deadline the task is reported as a retry with reason "timeout", task.signal is aborted, and
// whatever the handler does later is ignored (its task is reported once).

const { retry } = require('./outcome');

const TIMEOUT_REASON = 'timeout';
const TIMED_OUT = Symbol('timed out');

function errorReason(error) {
  if (error instanceof Error) return error.message || error.name;
  return `the handler threw ${String(error)}`;
}

// The deadline of a task: its field `timeout_ms` when that is a positive integer, else the
// worker's `timeout` (0: none). Returns {ms, problem}.
function taskDeadline(task, workerTimeoutMs) {
  const field = task.fields.timeout_ms;
  if (field === undefined || field === null) return { ms: workerTimeoutMs };
  if (/^[1-9][0-9]{0,9}$/.test(field)) return { ms: Number(field) };
  return { ms: workerTimeoutMs, problem: `field timeout_ms '${field}' is not a positive number of milliseconds` };
}

// Resolves to what the handler returned (or the retry standing for its error or deadline).
async function runHandler(handler, task, deadlineMs) {
  const controller = new AbortController();
  task.signal = controller.signal;
  const handled = (async () => handler(task))().catch((e) => retry(errorReason(e)));
  if (!deadlineMs) return handled;
  let timer;
  const deadline = new Promise((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), deadlineMs);
  });
  const result = await Promise.race([handled, deadline]);
  clearTimeout(timer);
  if (result !== TIMED_OUT) return result;
  controller.abort(new Error(`the task's deadline of ${deadlineMs} ms has passed`));
  return retry(TIMEOUT_REASON);
}

module.exports = { runHandler, taskDeadline, errorReason, TIMEOUT_REASON };
