import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readHttpAccess, sha256 } from "../../src/config/httpCredentials.js";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import {
  expectConfigError,
  loadContent,
  makeTempDir,
  validated,
  type TempDir,
} from "./configFiles.js";

/** http.auth.roles and http.ui.actions (README "HTTP authentication", "Actions"). */
describe("http.auth.roles and http.ui.actions", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });

  it("keeps actions off by default, and http.auth unchanged without roles", async () => {
    const config = await validated({});
    // Absent unless given: http.auth and http.ui read as they always did.
    expect(config.http.ui.actions ?? false).toBe(false);
    expect(config.http.auth.roles).toBeUndefined();
  });

  it("exits 78 naming http.ui.actions and http.auth when actions are on without auth", async () => {
    await expectConfigError(validated({ http: { ui: { actions: true } } }), {
      key: "http.ui.actions",
      value: true,
      expected:
        "false while http.auth is off: actions need http.auth.roles.operator (bearerTokenFile or basicAuthFile)",
    });
  });

  it("exits 78 when actions are on with viewers only (nobody could act)", async () => {
    const auth = { bearerTokenFile: "/run/token" };
    await expectConfigError(validated({ http: { auth, ui: { actions: true } } }), {
      key: "http.ui.actions",
      value: true,
      expected:
        "false while http.auth has no operator: actions need http.auth.roles.operator (bearerTokenFile or basicAuthFile)",
    });
  });

  it("refuses a role with both files, an unknown role and an unknown key, naming each", async () => {
    const both = { bearerTokenFile: "/a", basicAuthFile: "/b" };
    await expectConfigError(validated({ http: { auth: { roles: { operator: both } } } }), {
      key: "http.auth.roles.operator.basicAuthFile",
      value: "/b",
      expected:
        "empty when http.auth.roles.operator.bearerTokenFile is set: set exactly one of the two",
    });
    await expectConfigError(validated({ http: { auth: { roles: { admin: {} } } } }), {
      key: "http.auth.roles.admin",
      value: {},
      expected: "a known role: one of viewer, operator",
    });
    const typo = { operator: { tokenFile: "/a" } };
    await expectConfigError(validated({ http: { auth: { roles: typo } } }), {
      key: "http.auth.roles.operator.tokenFile",
      value: "/a",
      expected: "a known key: one of bearerTokenFile, basicAuthFile",
    });
  });

  it("reads named tokens (name:token lines), names an unnamed one by its line, never by its secret", async () => {
    const operatorFile = await dir.write("ops", "# on call\nalice:tok-a\n\ntok-b\n");
    const viewerFile = await dir.write("viewers", "grafana:pw\n");
    const legacy = await dir.write("legacy", "old-token\n");
    const config = await loadContent(dir, {
      http: {
        auth: {
          bearerTokenFile: legacy,
          roles: {
            operator: { bearerTokenFile: operatorFile },
            viewer: { basicAuthFile: viewerFile },
          },
        },
        ui: { actions: true },
      },
    });
    expect(config.http.ui.actions).toBe(true);
    const access = await readHttpAccess(config.http.auth);
    expect(access).toEqual([
      {
        role: "viewer",
        credentials: { scheme: "Bearer", digests: [sha256("old-token")], names: ["token-1"] },
      },
      {
        role: "viewer",
        credentials: { scheme: "Basic", digests: [sha256("grafana:pw")], names: ["grafana"] },
      },
      {
        role: "operator",
        credentials: {
          scheme: "Bearer",
          digests: [sha256("tok-a"), sha256("tok-b")],
          names: ["alice", "token-4"],
        },
      },
    ]);
  });

  it("exits 78 naming the role's key when its file is missing or a line has a space", async () => {
    const missing = `${dir.path}/none`;
    const roles = { operator: { bearerTokenFile: missing } };
    await expectConfigError(loadContent(dir, { http: { auth: { roles } } }), {
      key: "http.auth.roles.operator.bearerTokenFile",
      value: missing,
      expected: "a readable file holding name:token lines (ENOENT)",
    });
    const spaced = await dir.write("spaced", "alice:tok en\n");
    const bad = { operator: { bearerTokenFile: spaced } };
    await expectConfigError(loadContent(dir, { http: { auth: { roles: bad } } }), {
      key: "http.auth.roles.operator.bearerTokenFile",
      value: spaced,
      expected: "name:token lines, one token without whitespace on each (line 1 is not one)",
    });
  });
});

describe("check-config with http.ui.actions", () => {
  it("exits 78 naming both keys when auth is off", async () => {
    const file = await writeConfigFile({
      redis: { url: "redis://127.0.0.1:1" },
      groups: [{ stream: "orders", group: "billing" }],
      http: { ui: { actions: true } },
    });
    try {
      const result = await runCli(["check-config", "--config", file.path]);
      expect(result.code).toBe(78);
      expect(result.stderr).toContain(
        "http.ui.actions = true: expected false while http.auth is off",
      );
    } finally {
      await file.remove();
    }
  });
});
