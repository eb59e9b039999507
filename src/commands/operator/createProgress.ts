import { SingleBar, Presets } from "cli-progress";
import type { Progress } from "../../core/Progress.js";

const SILENT: Progress = {
  start: () => undefined,
  update: () => undefined,
  stop: () => undefined,
};

/**
 * A bar on stderr (stdout stays for results and --json) when stderr is a terminal, else nothing:
 * logs and pipes get no control characters.
 */
export function createProgress(
  label: string,
  stream: NodeJS.WriteStream = process.stderr,
): Progress {
  if (!stream.isTTY) return SILENT;
  const bar = new SingleBar(
    {
      stream,
      format: `${label} [{bar}] {percentage}% | {value}/{total} | {eta_formatted} left`,
      hideCursor: true,
      clearOnComplete: false,
    },
    Presets.shades_classic,
  );
  let started = false;
  return {
    start(total) {
      bar.start(total, 0);
      started = true;
    },
    update(done) {
      if (started) bar.update(done);
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}
