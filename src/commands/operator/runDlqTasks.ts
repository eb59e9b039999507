import { redriveTaskDirectoryKey, type RedriveTask } from "../../core/redriveTask.js";
import { alignTable } from "../../operations/alignTable.js";
import { readRedriveTasks } from "../../reads/readRedriveTasks.js";
import type { OptionValues } from "../Command.js";
import { EXIT } from "../exitCodes.js";
import { writeJson, type OperatorSession } from "./OperatorCommand.js";

function when(ms: number): string {
  return ms > 0 ? new Date(ms).toISOString().replace(/\.\d+Z$/u, "Z") : "-";
}

function row(task: RedriveTask): string[] {
  return [
    task.id,
    task.status,
    `${task.stream}/${task.group}`,
    String(task.moved),
    String(task.toMove),
    task.rate > 0 ? `${task.rate}/s` : "unlimited",
    task.startedBy,
    when(task.startedAt),
    when(task.finishedAt),
    task.failure,
  ];
}

/** `dlq tasks`: the directory's tasks, newest first. */
export async function runDlqTasks(values: OptionValues, session: OperatorSession): Promise<number> {
  const directory = redriveTaskDirectoryKey(session.config.lease.key);
  const { tasks: all } = await readRedriveTasks(session.redis, directory);
  const stream = typeof values.stream === "string" ? values.stream : undefined;
  const tasks = stream === undefined ? all : all.filter((task) => task.stream === stream);
  if (values.json === true) {
    writeJson(session, { tasks });
    return EXIT.ok;
  }
  if (tasks.length === 0) {
    session.stdout.write("no redrive tasks\n");
    return EXIT.ok;
  }
  const header = [
    "ID",
    "STATUS",
    "GROUP",
    "MOVED",
    "TO MOVE",
    "RATE",
    "BY",
    "STARTED",
    "FINISHED",
    "FAILURE",
  ];
  session.stdout.write(`${alignTable([header, ...tasks.map(row)], new Set([3, 4]))}\n`);
  return EXIT.ok;
}
