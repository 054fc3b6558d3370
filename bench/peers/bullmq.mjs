// BullMQ on the benchmark's Redis: JOBS no-op jobs added with addBulk, then PROCESSES node
// processes, each one Worker of CONCURRENCY, timed until no job is waiting or active. Each
// worker process writes the ids it ran when it exits, so jobs that ran twice show up.
//
//   node bullmq.mjs run JOBS PROCESSES CONCURRENCY OUT_DIR    enqueue, measure, print the result
//   node bullmq.mjs work CONCURRENCY OUT_DIR                   one worker process

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Queue, Worker } from "bullmq";

const queueName = "peers";

function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (ROWPUMP_*: from scripts/servers.sh)`);
  return value;
}

// Workers need maxRetriesPerRequest: null (BullMQ refuses other values for blocking calls).
const connection = {
  host: env("ROWPUMP_REDIS_HOST"),
  port: Number(env("ROWPUMP_REDIS_PORT")),
  maxRetriesPerRequest: null,
};

// utime + stime of every thread of the process, from procfs (USER_HZ = 100).
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

function serverCpu() {
  return { mysql: cpuSeconds(env("ROWPUMP_MYSQL_PID")), redis: cpuSeconds(env("ROWPUMP_REDIS_PID")) };
}

async function jobsLeft(queue) {
  const counts = await queue.getJobCounts("waiting", "active", "delayed", "prioritized", "paused");
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

async function run(jobs, processes, concurrency, dir) {
  const queue = new Queue(queueName, { connection });
  for (let first = 1; first <= jobs; first += 1000) {
    const batch = [];
    for (let id = first; id < Math.min(first + 1000, jobs + 1); id++) {
      batch.push({ name: "noop", data: { id } });
    }
    await queue.addBulk(batch);
  }

  const before = serverCpu();
  const started = performance.now();
  const workers = Array.from({ length: processes }, () =>
    spawn(process.execPath, [import.meta.filename, "work", String(concurrency), dir], {
      stdio: "inherit",
    }),
  );
  const limitMs = 900_000;
  let left = jobs;
  while ((left = await jobsLeft(queue)) > 0 && performance.now() - started < limitMs) {
    await sleep(20);
  }
  const seconds = (performance.now() - started) / 1000;
  const after = serverCpu();
  const workersCpu = workers.reduce((sum, w) => sum + cpuSeconds(w.pid), 0);
  console.log(
    `result jobs=${jobs} left=${left} seconds=${seconds.toFixed(3)} ` +
      `workers_cpu_s=${workersCpu.toFixed(2)} mysql_cpu_s=${(after.mysql - before.mysql).toFixed(2)} ` +
      `redis_cpu_s=${(after.redis - before.redis).toFixed(2)}`,
  );
  await Promise.all(
    workers.map((w) => new Promise((resolve) => w.on("exit", resolve).kill("SIGTERM"))),
  );
  await queue.close();
}

// Auto-removal as BullMQ's guide recommends for production: keep the last 1,000 completed
// and 5,000 failed jobs.
function work(concurrency, dir) {
  const ran = [];
  const worker = new Worker(queueName, async (job) => void ran.push(job.data.id), {
    connection,
    concurrency,
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 5000 },
  });
  process.on("SIGTERM", async () => {
    await worker.close();
    writeFileSync(`${dir}/ran-${process.pid}.txt`, ran.join("\n") + "\n");
    process.exit(0);
  });
}

const [mode, ...args] = process.argv.slice(2);
if (mode === "run" && args.length === 4) {
  await run(Number(args[0]), Number(args[1]), Number(args[2]), args[3]);
} else if (mode === "work" && args.length === 2) {
  work(Number(args[0]), args[1]);
} else {
  console.error("usage: node bullmq.mjs run JOBS PROCESSES CONCURRENCY OUT_DIR | work CONCURRENCY OUT_DIR");
  process.exit(2);
}
