import type { Logger } from "pino";
import { PeriodicTask } from "../core/PeriodicTask.js";
import {
  isActiveTaskStatus,
  redriveTaskDirectoryKey,
  REDRIVE_TASK_STATUSES,
  type RedriveTask,
} from "../core/redriveTask.js";
import { backgroundTimers, type Timers } from "../core/timers.js";
import type { EventWriter } from "../events/EventWriter.js";
import type { LeaderTerm } from "../lease/types.js";
import type { RedriveTaskMetrics } from "../metrics/redriveTaskMetrics.js";
import { readRedriveTasks } from "../reads/readRedriveTasks.js";
import { runRedriveTaskBatch, type RedriveTaskBatchResult } from "../scripts/redriveTaskBatch.js";
import { runRedriveTaskDirectory } from "../scripts/redriveTaskDirectory.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { PageSizer } from "../sweep/PageSizer.js";
import { classifySweepError } from "../sweep/sweepErrors.js";

/**
 * Dead letters a batch examines at most. Within it each task's batches are sized by their own
 * Redis time (PageSizer, as the sweep's pages): 500 dead letters of ~170 bytes took 5-14 ms, far
 * over the budget (test/bench/RESULTS.md, "Redrive tasks").
 */
const TASK_BATCH_SIZE = 500;
/** With nothing active, the directory is read this often (and at once when the lease is won). */
const POLL_MS = 5000;
/** One round runs batches for this long at most, then reads the directory again. */
const ROUND_SLICE_MS = 1000;
/** A directory entry without its task is pruned once it is this old (see startRedriveTask). */
const PRUNE_AFTER_MS = 10 * 60_000;

export interface RedriveTaskRunnerOptions {
  redis: ScriptedRedis;
  /** lease.key: the directory of tasks lives beside it. */
  leaseKey: string;
  /** The lease's current term; undefined on a standby, which runs nothing. */
  currentTerm: () => LeaderTerm | undefined;
  logger: Logger;
  metrics: RedriveTaskMetrics;
  events: Pick<EventWriter, "write">;
  /** sweep.maxScriptMs: the Redis time one batch may take (README "Configuration"). */
  budgetMs: number;
  batchSize?: number;
  pollMs?: number;
  /** Monotonic ms (the rate's clock); Unix ms for pruning. */
  now?: () => number;
  wallNow?: () => number;
  timers?: Timers;
}

/**
 * The leader's runner of redrive tasks (`dlq redrive --async`): each round reads the directory
 * and runs batches (redriveTaskBatch.lua, fenced by the lease) of every active task, each at its
 * own rate. A task's position is in Redis, so a new leader's runner goes on where the last batch
 * ended. A fenced batch (the lease moved) ends the round.
 */
export class RedriveTaskRunner {
  private readonly options: RedriveTaskRunnerOptions;
  private readonly loop: PeriodicTask;
  private readonly log: Logger;
  private readonly now: () => number;
  /** Per active task id: when its next batch may go (monotonic ms). */
  private readonly nextAt = new Map<string, number>();
  /** Per active task id: the size of its next batch, from the Redis time of the last ones. */
  private readonly sizers = new Map<string, PageSizer>();
  private nextDelayMs = 0;

  constructor(options: RedriveTaskRunnerOptions) {
    this.options = options;
    this.log = options.logger.child({ component: "redrive-tasks" });
    this.now = options.now ?? (() => performance.now());
    this.loop = new PeriodicTask({
      run: () => this.runOnce(),
      nextDelayMs: () => this.nextDelayMs,
      onError: (error) => this.log.error({ err: error }, "redrive tasks: round failed"),
      timers: options.timers ?? backgroundTimers,
    });
  }

  start(): void {
    this.loop.start(0);
  }

  /** A round now (the lease was just won). */
  runSoon(): void {
    if (!this.loop.busy) this.loop.runNow();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** One round: public so that tests run it without a timer. Resolves to the tasks it saw. */
  async runOnce(): Promise<RedriveTask[]> {
    const pollMs = this.options.pollMs ?? POLL_MS;
    this.nextDelayMs = pollMs;
    const term = this.options.currentTerm();
    if (term === undefined || term.signal.aborted) return [];
    const directory = redriveTaskDirectoryKey(this.options.leaseKey);
    const { tasks, gone } = await readRedriveTasks(this.options.redis, directory);
    await this.prune(directory, gone);
    const active = tasks.filter((task) => isActiveTaskStatus(task.status));
    const ids = new Set(active.map((task) => task.id));
    for (const id of this.nextAt.keys()) if (!ids.has(id)) this.nextAt.delete(id);
    for (const id of this.sizers.keys()) if (!ids.has(id)) this.sizers.delete(id);
    const sliceEnd = this.now() + ROUND_SLICE_MS;
    for (const task of active) {
      if (term.signal.aborted) break;
      const status = await this.runTask(task, term, sliceEnd);
      task.status = status === "" ? task.status : status;
    }
    this.countStatuses(tasks);
    const waits = [...this.nextAt.values()].map((at) => at - this.now());
    if (waits.length > 0) this.nextDelayMs = Math.max(0, Math.min(pollMs, ...waits));
    return tasks;
  }

  /** Batches of one task until it ends, waits for its rate, the slice ends, or the term ends. */
  private async runTask(
    task: RedriveTask,
    term: LeaderTerm,
    sliceEnd: number,
  ): Promise<RedriveTask["status"] | ""> {
    const batchSize = this.options.batchSize ?? TASK_BATCH_SIZE;
    const rateLimit = task.rate > 0 ? Math.ceil(task.rate / 10) : batchSize;
    const sizer = this.sizers.get(task.id) ?? new PageSizer(batchSize, this.options.budgetMs);
    this.sizers.set(task.id, sizer);
    let status: RedriveTask["status"] | "" = task.status;
    while (!term.signal.aborted && (this.nextAt.get(task.id) ?? 0) <= this.now()) {
      const size = Math.min(sizer.maxClaimed, rateLimit);
      let batch: RedriveTaskBatchResult;
      try {
        batch = await runRedriveTaskBatch(this.options.redis, {
          task,
          fence: term.fence,
          scanLimit: size,
          moveLimit: size,
        });
      } catch (error) {
        if (classifySweepError(error).kind === "fenced") {
          this.log.warn(
            { task: task.id },
            "redrive task stopped: the lease is held by another process",
          );
          return status;
        }
        this.log.error(
          { task: task.id, err: error },
          "redrive task: batch failed, retried next round",
        );
        this.nextAt.set(task.id, this.now() + (this.options.pollMs ?? POLL_MS));
        return status;
      }
      status = batch.status;
      this.options.metrics.movedEntries.inc(batch.movedNow);
      const { durationMs, movedNow } = batch;
      const cost = { durationMs, claimMs: durationMs, claimed: movedNow, maxClaimed: size };
      sizer.record({ ...cost, examined: size });
      if (!isActiveTaskStatus(batch.status)) {
        this.finished(task, batch);
        return status;
      }
      const pause = task.rate > 0 ? (Math.max(1, movedNow) * 1000) / task.rate : 0;
      this.nextAt.set(task.id, this.now() + pause);
      if (this.now() >= sliceEnd) return status;
    }
    return status;
  }

  private finished(task: RedriveTask, batch: RedriveTaskBatchResult): void {
    this.nextAt.delete(task.id);
    const { moved, toMove, failure } = batch;
    const detail = {
      id: task.id,
      status: batch.status,
      moved,
      toMove,
      failure,
      startedBy: task.startedBy,
    };
    const fields = { stream: task.stream, group: task.group, ...detail };
    if (batch.status === "FAILED") this.log.error(fields, "redrive task failed");
    else this.log.info(fields, "redrive task finished");
    this.options.events.write({
      type: "task-finished",
      stream: task.stream,
      group: task.group,
      count: moved,
      detail: { ...detail, deadLetterStream: task.deadLetterStream, target: task.target },
    });
  }

  private countStatuses(tasks: readonly RedriveTask[]): void {
    for (const status of REDRIVE_TASK_STATUSES) {
      this.options.metrics.tasks.set({ status }, tasks.filter((t) => t.status === status).length);
    }
  }

  private async prune(
    directory: string,
    gone: readonly { key: string; startedAt: number }[],
  ): Promise<void> {
    const before = (this.options.wallNow ?? Date.now)() - PRUNE_AFTER_MS;
    const old = gone.filter((member) => member.startedAt < before).map((member) => member.key);
    if (old.length === 0) return;
    await runRedriveTaskDirectory(this.options.redis, directory, { remove: old });
  }
}
