import { createInterface } from "node:readline/promises";
import { OperatorFailure, type OperatorSession } from "./OperatorCommand.js";

/**
 * `dlq purge --all` at a terminal asks for the group's name typed back, so a command recalled
 * from the shell's history for another group does not delete this one's dead letters. Without a
 * terminal (scripts, CI) nothing is asked, as `--yes` does.
 */
export async function confirmPurgeAll(
  session: OperatorSession,
  target: { id: string; group: string; deadLetterStream: string },
  input: NodeJS.ReadStream = process.stdin,
): Promise<void> {
  if (!input.isTTY || !session.stderr.isTTY) return;
  const prompt = createInterface({ input, output: session.stderr, terminal: true });
  const ask = `${target.id}: this deletes every dead letter of the group in ${target.deadLetterStream}; type the group's name (${target.group}) to confirm: `;
  try {
    const answer = await prompt.question(ask, { signal: session.signal });
    if (answer.trim() !== target.group) throw new OperatorFailure("not confirmed: nothing purged");
  } catch (error) {
    if (error instanceof OperatorFailure) throw error;
    throw new OperatorFailure("not confirmed: nothing purged");
  } finally {
    prompt.close();
  }
}
