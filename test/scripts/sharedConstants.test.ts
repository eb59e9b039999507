import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SLOT_TOKEN_PREFIX } from "../../src/core/fence.js";
import {
  DEAD_LETTER_METADATA,
  DEAD_LETTER_REASONS,
  REDRIVE_METADATA,
  REQUEUE_METADATA,
} from "../../src/core/copyMetadata.js";
import { MAX_ID_PART } from "../../src/core/streamIds.js";
import { MAX_REPORTED_IDS } from "../../src/sweep/GroupSweepResult.js";
import { codeOfMessage, RedisErrorCode } from "../../src/redis/redisErrors.js";
import { MOVE_FENCING_TOKEN_ERRORS } from "../../src/scripts/moveFencingToken.js";
import { PURGE_DEAD_LETTERS_ERRORS } from "../../src/scripts/purgeDeadLetters.js";
import { REDRIVE_DEAD_LETTERS_ERRORS } from "../../src/scripts/redriveDeadLetters.js";
import { REAP_CONSUMERS_ERRORS } from "../../src/scripts/reapConsumers.js";
import { ENSURE_RETRY_LANE_ERRORS } from "../../src/scripts/ensureRetryLane.js";
import { SAFE_TRIM_ERRORS } from "../../src/scripts/safeTrim.js";
import { TRIM_RETRY_LANE_ERRORS } from "../../src/scripts/trimRetryLane.js";
import { SWEEP_PAGE_ERRORS } from "../../src/scripts/sweepPage.js";
import { APPEND_EVENTS_ERRORS } from "../../src/scripts/appendEvents.js";
import { INDEX_DEAD_LETTERS_ERRORS } from "../../src/scripts/indexDeadLetters.js";
import { RESTORE_DEAD_LETTERS_ERRORS } from "../../src/scripts/restoreDeadLetters.js";
import { SWEEP_ERROR_CODES } from "../../src/sweep/sweepErrors.js";
import { REDRIVE_TASK_BATCH_ERRORS } from "../../src/scripts/redriveTaskBatch.js";
import { REDRIVE_TASK_DIRECTORY_ERRORS } from "../../src/scripts/redriveTaskDirectory.js";

const LUA_DIR = new URL("../../src/scripts/lua/", import.meta.url);

/** The error codes a script's header lists in its "Errors" paragraph, in order. */
function listed(file: string): string[] {
  const codes = new Set<string>(Object.values(RedisErrorCode));
  const source = lua(file);
  const start = source.search(/Errors[ ,(]/u);
  const paragraph = source.slice(start, source.indexOf("\n\n", start));
  return [...paragraph.matchAll(/\b[A-Z]{4,}\b/gu)]
    .map((m) => m[0])
    .filter((word) => codes.has(word));
}

function lua(path: string): string {
  return readFileSync(new URL(`../../src/scripts/lua/${path}`, import.meta.url), "utf8");
}

/** `local NAME = <value>` in a Lua include: a quoted string, a number, or a list of strings. */
function luaConstant(source: string, name: string): unknown {
  const match = new RegExp(`^local ${name} = (\\{[^}]*\\}|'[^']*'|\\d+)`, "mu").exec(source);
  if (match === null) throw new Error(`no local ${name}`);
  const value = match[1] ?? "";
  if (value.startsWith("'")) return value.slice(1, -1);
  if (value.startsWith("{")) return [...value.matchAll(/'([^']*)'/gu)].map((m) => m[1]);
  return Number(value);
}

describe("constants shared by the Lua includes and TypeScript", () => {
  it("the fence's token prefix", () => {
    expect(luaConstant(lua("includes/fence.lua"), "SLOT_TOKEN_PREFIX")).toBe(SLOT_TOKEN_PREFIX);
  });

  it("the largest id part", () => {
    expect(luaConstant(lua("includes/streamIds.lua"), "MAX_ID_PART")).toBe(MAX_ID_PART);
  });

  it("the metadata fields of copies, in the order they are written", () => {
    const metadata = lua("includes/metadata.lua");
    expect(luaConstant(metadata, "REQUEUE_METADATA")).toEqual(REQUEUE_METADATA);
    expect(luaConstant(metadata, "DEAD_LETTER_METADATA")).toEqual(DEAD_LETTER_METADATA);
    expect(luaConstant(metadata, "REDRIVE_METADATA")).toEqual(REDRIVE_METADATA);
  });

  it("the dead-letter reasons: one list, and every reason sweepPage writes is on it", () => {
    expect(luaConstant(lua("includes/metadata.lua"), "DEAD_LETTER_REASONS")).toEqual(
      DEAD_LETTER_REASONS,
    );
    const written = [...lua("sweepPage.lua").matchAll(/reason = '([a-z-]+)'/gu)].map((m) => m[1]);
    expect(new Set(written)).toEqual(new Set(DEAD_LETTER_REASONS));
  });

  it("the number of ids a reply lists", () => {
    expect(luaConstant(lua("includes/limits.lua"), "MAX_REPORTED_IDS")).toBe(MAX_REPORTED_IDS);
  });

  it("each script's header lists the error codes of its typed module", () => {
    expect(listed("moveFencingToken.lua")).toEqual(MOVE_FENCING_TOKEN_ERRORS);
    expect(listed("purgeDeadLetters.lua")).toEqual(PURGE_DEAD_LETTERS_ERRORS);
    expect(listed("redriveDeadLetters.lua")).toEqual(REDRIVE_DEAD_LETTERS_ERRORS);
    expect(listed("reapConsumers.lua")).toEqual(REAP_CONSUMERS_ERRORS);
    expect(listed("ensureRetryLane.lua")).toEqual(ENSURE_RETRY_LANE_ERRORS);
    expect(listed("safeTrim.lua")).toEqual(SAFE_TRIM_ERRORS);
    expect(listed("trimRetryLane.lua")).toEqual(TRIM_RETRY_LANE_ERRORS);
    expect(listed("sweepPage.lua")).toEqual(SWEEP_PAGE_ERRORS);
  });

  it("every script with an Errors paragraph has its typed list; the classifiers read from them", () => {
    const lists: Record<string, readonly RedisErrorCode[]> = {
      "appendEvents.lua": APPEND_EVENTS_ERRORS,
      "ensureRetryLane.lua": ENSURE_RETRY_LANE_ERRORS,
      "indexDeadLetters.lua": INDEX_DEAD_LETTERS_ERRORS,
      "moveFencingToken.lua": MOVE_FENCING_TOKEN_ERRORS,
      "purgeDeadLetters.lua": PURGE_DEAD_LETTERS_ERRORS,
      "reapConsumers.lua": REAP_CONSUMERS_ERRORS,
      "redriveDeadLetters.lua": REDRIVE_DEAD_LETTERS_ERRORS,
      "redriveTaskBatch.lua": REDRIVE_TASK_BATCH_ERRORS,
      "redriveTaskDirectory.lua": REDRIVE_TASK_DIRECTORY_ERRORS,
      "restoreDeadLetters.lua": RESTORE_DEAD_LETTERS_ERRORS,
      "safeTrim.lua": SAFE_TRIM_ERRORS,
      "sweepPage.lua": SWEEP_PAGE_ERRORS,
      "trimRetryLane.lua": TRIM_RETRY_LANE_ERRORS,
    };
    const withErrors = readdirSync(LUA_DIR).filter(
      (file) => file.endsWith(".lua") && /Errors[ ,(]/u.test(lua(file)),
    );
    expect(Object.keys(lists).sort()).toEqual(withErrors.sort());
    for (const [file, list] of Object.entries(lists)) expect(listed(file), file).toEqual(list);
    // Every code a script refuses with is read back as itself from the front of a message.
    for (const code of new Set(Object.values(lists).flat())) {
      // XINFO's NOSUCHKEY is Redis' "ERR no such key"; every other code leads the message.
      const message = code === "NOSUCHKEY" ? "ERR no such key" : `${code} refused`;
      if (code !== "OTHER") expect(codeOfMessage(message)).toBe(code);
    }
    // The sweep's kinds are given for exactly the sweep script's codes.
    expect(Object.keys(SWEEP_ERROR_CODES).sort()).toEqual([...SWEEP_PAGE_ERRORS].sort());
  });
});
