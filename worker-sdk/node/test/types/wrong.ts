// Must NOT compile (test/types.test.js): the types catch these mistakes.
import { Worker, ok } from '../..';

const worker = new Worker({ queue: 'q', concurrency: '8' });
void worker.run(async (task) => {
  const attempt: string = task.attempt;
  void attempt;
  return { status: '2' };
});
void ok;
