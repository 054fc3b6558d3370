'use strict';
// Where a worker reports the problems it survives: options.log, or stderr. A Redis outage is
// one line when it starts and one when it ends, however many commands fail in between.

class WorkerLog {
  constructor(sink, workerId) {
    this.sink = sink;
    this.workerId = workerId;
    this.redisDown = false;
  }

  line(text) {
    try {
      if (this.sink) this.sink(text);
      else process.stderr.write(`rowpump worker ${this.workerId}: ${text}\n`);
    } catch {
      // A failing logger must not take the worker down.
    }
  }

  redisFailed(error) {
    if (this.redisDown) return;
    this.redisDown = true;
    this.line(`redis unavailable (${error && error.message}); retrying`);
  }

  redisOk() {
    if (!this.redisDown) return;
    this.redisDown = false;
    this.line('redis reachable again');
  }
}

module.exports = { WorkerLog };
