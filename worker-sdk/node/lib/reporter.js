'use strict';
// Reporting handled tasks with the complete script (worker-sdk/src/reporter.cpp): it takes
// each task out of the processing list and pushes its done message, only if the task was
// still there, and says how many it accepted.

const { logText } = require('./log_text');
const { scripts } = require('./scripts');
const { readyMessage } = require('./task');

// reports: [{task, done}] with `done` the done message (a Buffer).
function reportArgs(reports) {
  const args = [];
  for (const r of reports) args.push(readyMessage(r.task), r.done);
  return args;
}

function tasksText(reports) {
  const first = `'${logText(reports[0].task.id)}'`;
  return reports.length === 1 ? `task ${first}` : `${reports.length} tasks (${first}, ...)`;
}

function refusedText(reports, accepted) {
  const refused = reports.length - accepted;
  if (refused <= 0) return '';
  if (reports.length === 1) {
    return `the report on ${tasksText(reports)} came too late: the task had been taken back from this worker`;
  }
  return `the reports on ${refused} of ${tasksText(reports)} came too late: ` +
    'the tasks had been taken back from this worker';
}

class Reporter {
  constructor(worker) {
    this.worker = worker;
    this.done = 0; // reports the done list took, for the heartbeat's worker info
  }

  // Sends the reports at once (a slot sends its next fetch right behind); resolves to the
  // number accepted.
  async send(client, reports) {
    const { keys } = this.worker;
    const accepted = Number(await scripts.complete.run(client, [keys.processing, keys.done], reportArgs(reports)));
    this.done += accepted;
    return accepted;
  }

  logRefused(reports, accepted, maybeSent) {
    // After a broken connection a refusal may only mean that the first attempt got through.
    if (maybeSent) return;
    const text = refusedText(reports, accepted);
    if (text) this.worker.log.line(text);
  }

  // Until Redis takes the reports; past the heartbeat TTL while stopping it gives up (the
  // dispatcher takes the tasks back anyway once the heartbeat is gone).
  async reportUntilDone(client, reports, maybeSent) {
    const { log, options } = this.worker;
    let attempt = 0;
    let failingSince = null;
    for (;;) {
      try {
        this.logRefused(reports, await this.send(client, reports), maybeSent || failingSince !== null);
        log.redisOk();
        return;
      } catch (e) {
        log.redisFailed(e);
        const now = this.worker.now();
        if (failingSince === null) {
          failingSince = now;
          log.line(`report on ${tasksText(reports)} failed (${e.message}); retrying`);
        }
        if (this.worker.stopping && now - failingSince >= options.heartbeatTtl) break;
      }
      await this.worker.sleep(Math.min(100 * 2 ** attempt++, 2000), { stoppable: false });
    }
    log.line(`gave up reporting on ${tasksText(reports)}; they stay in ${this.worker.keys.processing} ` +
      'until the dispatcher takes them back');
  }
}

module.exports = { Reporter, reportArgs, refusedText };
