import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatEffectiveConfig } from "../../src/config/formatEffectiveConfig.js";
import { endpointOptions } from "../../src/redis/connectionOptions.js";
import { aclAdvice } from "../../src/redis/aclAdvice.js";
import { describeTlsError } from "../../src/redis/describeTlsError.js";
import { plainRedisConfig } from "../../src/config/defaultConfig.js";
import {
  expectConfigError,
  loadContent,
  makeTempDir,
  type TempDir,
} from "../config/configFiles.js";

let dir: TempDir;
beforeAll(async () => {
  dir = await makeTempDir();
});
afterAll(async () => {
  await dir.remove();
});

const SENTINEL = {
  mode: "sentinel",
  url: "redis://mymaster",
  nodes: ["10.0.0.1:26379", "sentinel-2:26379", "[::1]:26380"],
  masterName: "mymaster",
};

describe("redis.* configuration", () => {
  it("reads the nested tls section, the Sentinel keys and sentinelPasswordFile", async () => {
    const sentinelPasswordFile = await dir.write("sentinel-password", "s3ntinel\n");
    const config = await loadContent(dir, {
      redis: {
        ...SENTINEL,
        url: "rediss://mymaster",
        sentinelPasswordFile,
        tls: { serverName: "redis.internal" },
      },
    });
    expect(config.redis).toMatchObject({
      ...SENTINEL,
      url: "rediss://mymaster",
      sentinelPassword: "s3ntinel",
    });
    expect(config.redis.tls).toEqual({
      caFile: "",
      certFile: "",
      keyFile: "",
      serverName: "redis.internal",
    });
    const shown = formatEffectiveConfig(config);
    expect(shown).not.toContain("s3ntinel");
    expect(shown).toContain('"sentinelPassword": "***"');
  });

  it("reports an unknown key inside redis.tls with the known ones", async () => {
    await expectConfigError(loadContent(dir, { redis: { tls: { cafile: "/ca.pem" } } }), {
      key: "redis.tls.cafile",
      value: "/ca.pem",
      expected: "a known redis.tls key: one of caFile, certFile, keyFile, serverName",
    });
    await expectConfigError(loadContent(dir, { redis: { tls: "yes" } }), {
      key: "redis.tls",
      value: "yes",
      expected: "a mapping of redis.tls settings",
    });
  });

  it("takes the ACL user from STREAM_JANITOR_REDIS_USERNAME over the file", async () => {
    const config = await loadContent(
      dir,
      { redis: { username: "file-user" } },
      {
        STREAM_JANITOR_REDIS_USERNAME: "env-user",
      },
    );
    expect(config.redis.username).toBe("env-user");
  });

  it.each([
    [
      { mode: "cluster", masterName: "m" },
      "redis.masterName",
      "m",
      "empty unless redis.mode is sentinel",
    ],
    [
      { mode: "cluster", url: "unix:///run/redis.sock" },
      "redis.url",
      "unix:///run/redis.sock",
      "redis:// or rediss:// in cluster mode (a seed node the others can name)",
    ],
    [
      { mode: "cluster", url: "redis://seed:7000/2" },
      "redis.url",
      "redis://seed:7000/2",
      "no database, or /0, in cluster mode (Redis Cluster has only database 0)",
    ],
    [
      { mode: "sentinel", masterName: "m" },
      "redis.nodes",
      [],
      'at least one Sentinel ("host:port") when redis.mode is sentinel',
    ],
    [
      { mode: "sentinel", nodes: ["h:26379"] },
      "redis.masterName",
      "",
      "the name the Sentinels monitor the master under (SENTINEL MASTERS)",
    ],
    [
      { nodes: ["h:26379"] },
      "redis.nodes",
      ["h:26379"],
      "empty unless redis.mode is sentinel or cluster",
    ],
    [{ nodes: ["no-port"] }, "redis.nodes", ["no-port"], 'a list of "host:port" strings'],
    [
      { tls: { caFile: "/ca.pem" } },
      "redis.tls.caFile",
      "/ca.pem",
      "empty unless redis.url is rediss://",
    ],
    [
      { url: "rediss://h", tls: { certFile: "/c.pem" } },
      "redis.tls.keyFile",
      "",
      "set together with its pair (certFile and keyFile)",
    ],
    [{ mode: "bogus" }, "redis.mode", "bogus", "one of standalone, sentinel, cluster"],
  ])("refuses %j (exit 78 naming %s)", async (redis, key, value, expected) => {
    await expectConfigError(loadContent(dir, { redis }), { key, value, expected });
  });

  it("exits 78 naming sentinelPasswordFile when it is missing", async () => {
    const error = await loadContent(dir, {
      redis: { ...SENTINEL, sentinelPasswordFile: "/nonexistent" },
    }).catch((e: unknown) => e);
    expect(String(error)).toMatch(
      /redis\.sentinelPasswordFile = "\/nonexistent": expected a readable file .*ENOENT/u,
    );
  });

  it("accepts cluster mode with one seed URL and more seed nodes", async () => {
    const redis = { mode: "cluster", url: "redis://seed-1:7000", nodes: ["seed-2:7000"] };
    const config = await loadContent(dir, { redis });
    expect(config.redis).toMatchObject(redis);
  });

  it("accepts unix:///path URLs", async () => {
    const config = await loadContent(dir, { redis: { url: "unix:///run/redis/redis.sock" } });
    expect(endpointOptions(config.redis)).toEqual({ path: "/run/redis/redis.sock" });
  });
});

describe("endpointOptions", () => {
  it("takes the user and password from the URL unless the keys say otherwise", () => {
    expect(endpointOptions(plainRedisConfig("redis://janitor:pw@h:6380/2"))).toEqual({
      host: "h",
      port: 6380,
      username: "janitor",
      password: "pw",
      db: 2,
    });
    const keys = {
      ...plainRedisConfig("redis://janitor:pw@h"),
      username: "other",
      password: "secret",
    };
    expect(endpointOptions(keys)).toMatchObject({
      username: "other",
      password: "secret",
      port: 6379,
    });
  });

  it("applies TLS to the Sentinels and the data nodes alike for rediss://", () => {
    const options = endpointOptions({
      ...plainRedisConfig("rediss://mymaster"),
      mode: "sentinel",
      nodes: ["127.0.0.1:26379", "[::1]:26380"],
      masterName: "mymaster",
      sentinelPassword: "sp",
      tls: { caFile: "", certFile: "", keyFile: "", serverName: "redis.internal" },
    });
    expect(options).toMatchObject({
      sentinels: [
        { host: "127.0.0.1", port: 26379 },
        { host: "::1", port: 26380 },
      ],
      name: "mymaster",
      role: "master",
      sentinelPassword: "sp",
      tls: { servername: "redis.internal" },
      sentinelTLS: { servername: "redis.internal" },
      enableTLSForSentinelMode: true,
      failoverDetector: true,
    });
    expect(
      endpointOptions({
        ...plainRedisConfig("redis://m"),
        mode: "sentinel",
        nodes: ["h:1"],
        masterName: "m",
      }),
    ).not.toHaveProperty("tls");
  });
});

describe("error explanations", () => {
  it("names the rule to add for each kind of NOPERM", () => {
    expect(
      aclAdvice("NOPERM this user has no permissions to run the 'client|setname' command"),
    ).toBe(
      'the ACL user may not run CLIENT SETNAME: add "+client|setname" to its rules (see deploy/redis/stream-janitor.acl)',
    );
    expect(
      aclAdvice("NOPERM this user has no permissions to access one of the keys used as arguments"),
    ).toMatch(/key pattern/u);
    expect(
      aclAdvice(
        "ERR The user executing the script can't run this command or subcommand script: abc",
      ),
    ).toMatch(/ACL LOG/u);
    expect(aclAdvice("ERR wrong number of arguments")).toBeUndefined();
  });

  it("says TLS and why for the handshake failures operators meet", () => {
    const tlsError = (code: string, message: string): Error =>
      Object.assign(new Error(message), { code });
    expect(
      describeTlsError(
        tlsError("SELF_SIGNED_CERT_IN_CHAIN", "self-signed certificate in certificate chain"),
      ),
    ).toMatch(/^TLS handshake failed: .*unknown CA.*redis\.tls\.caFile/u);
    expect(
      describeTlsError(
        tlsError(
          "ERR_TLS_CERT_ALTNAME_INVALID",
          "Hostname/IP does not match certificate's altnames",
        ),
      ),
    ).toMatch(/name mismatch.*serverName/u);
    expect(
      describeTlsError(
        tlsError(
          "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED",
          "1:error:0A00045C:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:x.c:1601",
        ),
      ),
    ).toBe(
      "TLS handshake failed: the server requires a client certificate (tlsv13 alert certificate required); set redis.tls.certFile and redis.tls.keyFile (mutual TLS)",
    );
    expect(
      describeTlsError(tlsError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:6379")),
    ).toBeUndefined();
  });
});
