// Types of rowpump-worker (hand-written; test/types/ checks them with tsc).

/// <reference types="node" />

/** Where Redis is: one server, a Sentinel group, or a Cluster. Other fields go to ioredis. */
export interface RedisConnection {
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  db?: number;
  tls?: object;
  /** Sentinel: the sentinels to ask, and `name`, the master's name. */
  sentinels?: Array<{ host: string; port: number }>;
  name?: string;
  sentinelUsername?: string;
  sentinelPassword?: string;
  /** Cluster: seed nodes (host and port options then apply to every node). */
  cluster?: Array<{ host: string; port: number }>;
  [ioredisOption: string]: unknown;
}

export interface WorkerOptions {
  /** The queue's name, as in the dispatcher's config. Required. */
  queue: string;
  redis?: RedisConnection;
  /** Handlers running at once (each slot has a Redis connection of its own). Default 1. */
  concurrency?: number;
  /** Tasks a slot takes per round trip: 0 (default) adaptive, 1 to 1000 exactly up to that. */
  batch?: number;
  /**
   * Default: `<hostname>-<pid>-<6 hex digits>`. [A-Za-z0-9_.-]{1,64}. One process at a time:
   * a restart under the same id waits for the earlier process's heartbeat to lapse and gives
   * back what it held; a second live process under the id is refused (run() rejects with
   * RowpumpError).
   */
  workerId?: string;
  /** Milliseconds. The dispatcher takes tasks back this long after the worker died. Default 10000. */
  heartbeatTtl?: number;
  /** Milliseconds between heartbeats. Default heartbeatTtl / 3. */
  heartbeatInterval?: number;
  /** Milliseconds to wait for a dispatcher to announce the queue. Default 30000. */
  queueWait?: number;
  /** Milliseconds a slot blocks in one fetch. Default 1000. */
  fetchTimeout?: number;
  /** The handler deadline in milliseconds (0: none); a task's field `timeout_ms` overrides it. */
  timeout?: number;
  /** run() drains on SIGTERM and SIGINT (a second one ends the process). Default true. */
  handleSignals?: boolean;
  /** One line per problem the worker survives. Default: stderr. */
  log?: ((line: string) => void) | null;
}

export interface Task {
  /** The row id, decoded (UTF-8). */
  readonly id: string;
  /** The row id's bytes. */
  readonly rawId: Buffer;
  readonly token: string;
  /** 1 on the first try. */
  readonly attempt: number;
  /** Fields the ready message carried after the token; null for a bare name (NULL). */
  readonly fields: Readonly<Record<string, string | null>>;
  /** Aborted when the handler's deadline passes (the task is then reported as a retry). */
  readonly signal: AbortSignal;
}

export type OutcomeVerb = 'ok' | 'retry' | 'fail';

export class Outcome {
  private constructor();
  readonly verb: OutcomeVerb;
  readonly values: Readonly<Record<string, string | number | bigint>>;
  readonly reason: string;
  readonly delayMs: number | undefined;
}

/** Done: `values` fill the queue's on_success placeholders, exactly those it declares. */
export function ok(values?: Record<string, string | number | bigint>): Outcome;
/** Try again later: after `delayMs` if given, else after the queue's backoff. */
export function retry(reason?: string, delayMs?: number): Outcome;
/** Give up: the row is dead (`rowpump dead` lists it). */
export function fail(reason?: string): Outcome;

/** A throw or a rejection is reported as retry(error.message). */
export type Handler = (task: Task) => Outcome | Promise<Outcome>;

export class Worker {
  /** Checks the options (throws RowpumpError); connects in run(). */
  constructor(options: WorkerOptions);
  readonly workerId: string;
  /** Malformed ready messages moved to the queue's bad list. */
  readonly badMessages: number;
  readonly stopping: boolean;
  /** Resolves once stopped and drained; rejects with RowpumpError for an unknown queue. */
  run(handler: Handler): Promise<void>;
  /** Resolves when the tasks in hand are reported and the heartbeat deleted. */
  stop(): Promise<void>;
  /** Keeps the task's claim for `leaseMs` from now; the task stays in hand. */
  extend(task: Task, leaseMs: number): Promise<void>;
}

/** Keeps one connection; one PUBLISH per nudge(). */
export class Nudger {
  constructor(redis: RedisConnection, queue: string);
  nudge(): Promise<void>;
  close(): void;
}

/** Wakes the queue's dispatcher to claim at once: call after committing a due row. */
export function nudge(redis: RedisConnection, queue: string): Promise<void>;

/** Bad options, an unknown queue, a Redis that refuses the login. */
export class RowpumpError extends Error {}

/** The reason of the retry reported for a task whose handler passed its deadline. */
export const TIMEOUT_REASON: 'timeout';
/** The protocol version this SDK speaks (docs/protocol.md "Protocol version"); a dispatcher that
 * publishes another in the queue's meta hash is refused before any task is taken. */
export const PROTOCOL_VERSION: number;
