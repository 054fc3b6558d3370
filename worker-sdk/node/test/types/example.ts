// Compiled by test/types.test.js with `tsc --noEmit`: the typed API as a user writes it.
import { Worker, ok, retry, fail, nudge, Nudger, RowpumpError, Task, Outcome, TIMEOUT_REASON } from '../..';

async function main(): Promise<void> {
  const worker = new Worker({
    queue: 'user_block_check',
    redis: { host: '127.0.0.1', port: 6379 },
    concurrency: 8,
    batch: 0,
    timeout: 30_000,
    log: (line: string) => console.error(line),
  });
  const sentinel = new Worker({ queue: 'q', redis: { sentinels: [{ host: 'a', port: 26379 }], name: 'jobs' } });
  const cluster = new Worker({ queue: 'q', redis: { cluster: [{ host: 'a', port: 7000 }] } });
  void sentinel;
  void cluster;
  await worker.run(async (task: Task): Promise<Outcome> => {
    const id: string = task.id;
    const bytes: Buffer = task.rawId;
    const attempt: number = task.attempt;
    const note: string | null | undefined = task.fields.note;
    if (task.signal.aborted) return retry(TIMEOUT_REASON);
    if (attempt > 3) return fail(`gave up on ${id} (${bytes.length} bytes, ${note})`);
    if (id === 'later') return retry('upstream down', 30_000);
    await worker.extend(task, 60_000);
    return ok({ status: '2', count: 3 });
  });
  const stopped: Promise<void> = worker.stop();
  await stopped;
  await nudge({ host: '127.0.0.1' }, 'user_block_check');
  const nudger = new Nudger({ port: 6379 }, 'user_block_check');
  await nudger.nudge();
  nudger.close();
  const error: Error = new RowpumpError('x');
  void error;
  const bad: number = worker.badMessages;
  void bad;
}

void main;
