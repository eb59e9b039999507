import { describe, expect, it } from "vitest";
import { explainRedisError } from "../../src/redis/explainRedisError.js";
import { aclAdvice, withAclAdvice } from "../../src/redis/aclAdvice.js";

/**
 * Every permission error a supported server sends, word for word (Redis 7.0.15's server.c and
 * script.c, Redis 7.4.1's and Valkey 8.0.1's getAclErrorMessage in acl.c; replies checked on
 * each). Redis 7.2 rewrote them; Valkey kept 7.2's. A script's refusals carry the code ERR.
 */
const SCRIPT = "script: 9e15db9d82a8a2f2029845f70d37494af8690c35, on @user_script:1.";
const WORDINGS = {
  "7.0": {
    command: "NOPERM this user has no permissions to run the 'xautoclaim' command",
    subcommand: "NOPERM this user has no permissions to run the 'client|setname' command",
    key: "NOPERM this user has no permissions to access one of the keys used as arguments",
    channel: "NOPERM this user has no permissions to access one of the channels used as arguments",
    scriptCommand: `ERR The user executing the script can't run this command or subcommand ${SCRIPT}`,
    scriptKey: `ERR The user executing the script can't access at least one of the keys mentioned in the command arguments ${SCRIPT}`,
    scriptChannel: `ERR The user executing the script can't publish to the channel mentioned in the command ${SCRIPT}`,
  },
  "7.2+ and Valkey": {
    command: "NOPERM User stream-janitor has no permissions to run the 'xautoclaim' command",
    subcommand: "NOPERM User stream-janitor has no permissions to run the 'client|setname' command",
    key: "NOPERM No permissions to access a key",
    channel: "NOPERM No permissions to access a channel",
    scriptCommand: `ERR ACL failure in script: User stream-janitor has no permissions to run the 'xautoclaim' command ${SCRIPT}`,
    scriptKey: `ERR ACL failure in script: No permissions to access a key ${SCRIPT}`,
    scriptChannel: `ERR ACL failure in script: No permissions to access a channel ${SCRIPT}`,
  },
} as const;
/** The verbose forms (7.2+ ACL DRYRUN's sentences with the NOPERM code): they name the key. */
const NAMED_KEY = "NOPERM User stream-janitor has no permissions to access the 'orders' key";
const NAMED_CHANNEL = "NOPERM User stream-janitor has no permissions to access the 'news' channel";

const ACL_FILE = "see deploy/redis/stream-janitor.acl";
const URL = "redis://127.0.0.1:6379";
const ENDPOINT = "127.0.0.1:6379";

describe.each(Object.entries(WORDINGS))("NOPERM advice, Redis %s wording", (_, words) => {
  it("names the command and the rule that allows it", () => {
    expect(aclAdvice(words.command)).toBe(
      `the ACL user may not run XAUTOCLAIM: add "+xautoclaim" to its rules (${ACL_FILE})`,
    );
    expect(aclAdvice(words.subcommand)).toBe(
      `the ACL user may not run CLIENT SETNAME: add "+client|setname" to its rules (${ACL_FILE})`,
    );
  });

  it("asks for a key or channel pattern", () => {
    expect(aclAdvice(words.key)).toBe(
      `the ACL user may not touch this key: add a key pattern covering it ("~pattern"; ACL LOG names the key; ${ACL_FILE})`,
    );
    expect(aclAdvice(words.channel)).toBe(
      'the ACL user may not use this channel: add "&pattern" to its rules (ACL LOG names it)',
    );
  });

  it("recognises a refusal inside a script", () => {
    expect(aclAdvice(words.scriptCommand)).toMatch(
      /^a command inside the script is not allowed for the ACL user: .*ACL LOG/u,
    );
    expect(aclAdvice(words.scriptKey)).toBe(
      `a key used by the script is outside the ACL user's key patterns: ACL LOG names it; add "~pattern" to its rules (${ACL_FILE})`,
    );
    expect(aclAdvice(words.scriptChannel)).toBe(
      `a channel used by the script is outside the ACL user's channel patterns: ACL LOG names it; add "&pattern" to its rules`,
    );
  });

  it("appends the advice to the error once", () => {
    const error = withAclAdvice(withAclAdvice(new Error(words.command)));
    expect(error.message).toBe(
      `${words.command} -- ACL: the ACL user may not run XAUTOCLAIM: add "+xautoclaim" to its rules (${ACL_FILE})`,
    );
  });

  it("explains a failure naming the endpoint, before and after the advice was appended", () => {
    for (const error of [new Error(words.command), withAclAdvice(new Error(words.command))]) {
      expect(explainRedisError(error, { url: URL })).toBe(
        `NOPERM: the ACL user may not run XAUTOCLAIM at ${ENDPOINT}: add +xautoclaim to its ACL rule (${ACL_FILE})`,
      );
    }
    for (const error of [new Error(words.key), withAclAdvice(new Error(words.key))]) {
      expect(explainRedisError(error, { url: URL })).toBe(
        `NOPERM at ${ENDPOINT}: the ACL user may not touch this key: add a key pattern covering it ("~pattern"; ACL LOG names the key; ${ACL_FILE})`,
      );
    }
    expect(explainRedisError(new Error(words.channel), { url: URL })).toBe(
      `NOPERM at ${ENDPOINT}: the ACL user may not use this channel: add "&pattern" to its rules (ACL LOG names it)`,
    );
    for (const said of [words.scriptCommand, words.scriptKey, words.scriptChannel]) {
      const advised = `${said} -- ACL: ${aclAdvice(said) ?? "(none)"}`;
      expect(explainRedisError(new Error(said), { url: URL })).toBe(advised);
      expect(explainRedisError(withAclAdvice(new Error(said)), { url: URL })).toBe(advised);
    }
  });
});

describe("NOPERM advice, beyond one wording", () => {
  it("names the command a script may not run when the server names it (7.2+)", () => {
    expect(aclAdvice(WORDINGS["7.2+ and Valkey"].scriptCommand)).toBe(
      `a command inside the script is not allowed for the ACL user: XAUTOCLAIM; add "+xautoclaim" to its rules (ACL LOG has the details; the full list is in deploy/redis/stream-janitor.acl)`,
    );
    expect(aclAdvice(WORDINGS["7.0"].scriptCommand)).toBe(
      `a command inside the script is not allowed for the ACL user: ACL LOG on the server names it; add "+command" to its rules (the full list is in deploy/redis/stream-janitor.acl)`,
    );
  });

  it("names the key or channel when the server does", () => {
    expect(aclAdvice(NAMED_KEY)).toBe(
      `the ACL user may not touch the key 'orders': add a key pattern covering it ("~pattern"; ${ACL_FILE})`,
    );
    expect(aclAdvice(NAMED_CHANNEL)).toBe(
      `the ACL user may not use the channel 'news': add "&pattern" to its rules`,
    );
  });

  it("matches on the code and what is named, not on the sentence around them", () => {
    // A future rewording keeps the code and the quoted name.
    expect(aclAdvice("NOPERM user 'x' lacks the right to run the 'xack' command")).toMatch(
      /^the ACL user may not run XACK: add "\+xack"/u,
    );
    expect(aclAdvice("NOPERM cannot touch a key")).toMatch(/^the ACL user may not touch this key/u);
    // Not a permission error, or one that says nothing actionable.
    expect(aclAdvice("ERR unknown command 'xfoo', with args beginning with:")).toBeUndefined();
    expect(aclAdvice("ERR wrong number of arguments for 'xadd' command")).toBeUndefined();
    expect(
      aclAdvice(
        "NOPERM ACLs rules changed between the moment the transaction was accumulated and its execution",
      ),
    ).toBeUndefined();
    expect(
      explainRedisError(
        new Error(
          "NOPERM ACLs rules changed between the moment the transaction was accumulated and its execution",
        ),
        { url: URL },
      ),
    ).toBe(
      `NOPERM at ${ENDPOINT}: ACLs rules changed between the moment the transaction was accumulated and its execution: the ACL rule must allow it (${ACL_FILE})`,
    );
  });
});
