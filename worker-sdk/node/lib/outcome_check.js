'use strict';
// Turning a handler's outcome into a done message: checked against the values the queue
// declares (the `values` field of its meta hash) and encoded within the protocol's limits,
// as worker-sdk/src/outcome_check.cpp does.

const { Outcome, retry } = require('./outcome');
const { doneHead } = require('./task');
const { MAX_MESSAGE_BYTES, clipReason, formatDone, isValidValueName } = require('./messages');

// "status, note" from "status,note"; names trimmed, empty ones dropped.
function parseValueNames(csv) {
  return String(csv || '').split(',').map((n) => n.trim()).filter((n) => n !== '');
}

function joined(names) {
  return names.length === 0 ? 'none' : names.join(', ');
}

// The names the queue's on_success takes, as the dispatcher announces them.
class DeclaredValues {
  constructor(queue) {
    this.queue = queue;
    this.names = [];
  }

  update(csv) {
    this.names = parseValueNames(csv);
  }

  // '' if `outcome` may be reported, else what is wrong with it, naming the queue.
  problem(outcome) {
    if (outcome.verb !== 'ok') return '';
    const problem = valueProblem(outcome.values, this.names);
    return problem === '' ? '' : `queue '${this.queue}': ${problem}`;
  }
}

// '' if `values` fit the declared names exactly, else what is wrong (common/src/report_rules.cpp).
function valueProblem(values, declared) {
  if (values === null || typeof values !== 'object' || Array.isArray(values)) {
    return 'the values of ok() must be an object of name: value';
  }
  for (const [name, value] of Object.entries(values)) {
    if (!declared.includes(name)) {
      return `undeclared value '${name}' (queue declares: ${joined(declared)})`;
    }
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'bigint') {
      return `value '${name}' is a ${value === null ? 'null' : typeof value}, not a string or a number`;
    }
  }
  for (const name of declared) {
    if (!Object.prototype.hasOwnProperty.call(values, name)) {
      return `value '${name}' is missing (on_success uses :${name}; queue declares: ${joined(declared)})`;
    }
  }
  return '';
}

// The done message (a Buffer) that reports `outcome` on `task`, with ms=<handlerMs> when
// given; throws when it cannot be sent.
function doneMessage(task, outcome, handlerMs) {
  const done = { head: doneHead(task), verb: outcome.verb, values: [], handlerMs };
  if (outcome.verb === 'ok') {
    for (const [name, value] of Object.entries(outcome.values)) {
      if (!isValidValueName(name)) throw new Error(`invalid value name '${name}'`);
      done.values.push([name, String(value)]);
    }
  } else {
    done.reason = clipReason(outcome.reason);
  }
  if (outcome.verb === 'retry' && outcome.delayMs !== undefined && outcome.delayMs !== null) {
    if (typeof outcome.delayMs !== 'number' || !Number.isFinite(outcome.delayMs)) {
      throw new Error(`the retry delay must be a number of milliseconds, not ${String(outcome.delayMs)}`);
    }
    done.delayMs = Math.max(0, Math.round(outcome.delayMs));
  }
  // The head keeps the ready message's bytes (latin1, one character per byte); the rest is ASCII.
  const message = Buffer.from(formatDone(done), 'latin1');
  if (message.length > MAX_MESSAGE_BYTES) {
    throw new Error(`the outcome of task '${task.id}' is ${message.length} bytes long once encoded; ` +
      `at most ${MAX_MESSAGE_BYTES} fit in a done message`);
  }
  return message;
}

// What the worker reports for a handler's result: its done message, or for one that cannot be
// reported, a retry naming the problem (the row is not lost, and once its attempts run out
// `rowpump dead` shows why). `handlerMs`: how long the handler ran (ms=), optional.
function checkedDoneMessage(task, outcome, declared, handlerMs) {
  let problem;
  if (!(outcome instanceof Outcome)) {
    problem = `the handler returned ${describe(outcome)}, not ok(), retry() or fail()`;
  } else {
    problem = declared.problem(outcome);
    if (problem === '') {
      try {
        return doneMessage(task, outcome, handlerMs);
      } catch (e) {
        problem = e.message;
      }
    }
  }
  return doneMessage(task, retry(problem), handlerMs);
}

function describe(value) {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return `an object (${(value.constructor && value.constructor.name) || 'no class'})`;
  return `a ${typeof value}`;
}

module.exports = { DeclaredValues, parseValueNames, valueProblem, doneMessage, checkedDoneMessage };
