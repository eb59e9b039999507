import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import type { RedisTlsConfig } from "../../src/core/configTypes.js";
import { freePort, spawnRedisServer } from "../../src/demo/spawnRedisServer.js";

const run = promisify(execFile);

/** PEM files made by openssl for one test file: a CA, a server and a client certificate. */
export interface TestCertificates {
  readonly dir: string;
  /** The CA that signed the server and client certificates. */
  readonly caFile: string;
  /** Server certificate for IP 127.0.0.1 and DNS localhost (and nothing else). */
  readonly serverCertFile: string;
  readonly serverKeyFile: string;
  /** Client certificate for mutual TLS, signed by the same CA. */
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  /** A second, unrelated CA: trusting only it must fail with "unknown CA". */
  readonly otherCaFile: string;
  read(path: string): Promise<Buffer>;
  remove(): Promise<void>;
}

async function openssl(dir: string, args: readonly string[]): Promise<void> {
  await run("openssl", args, { cwd: dir });
}

async function makeCa(dir: string, name: string): Promise<void> {
  await openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "2",
    "-subj",
    `/CN=${name}`,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.crt`,
  ]);
}

async function makeSigned(dir: string, name: string, extensions: string): Promise<void> {
  await openssl(dir, [
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-subj",
    `/CN=${name}`,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
  ]);
  await writeFile(join(dir, `${name}.ext`), extensions);
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.crt`,
  ]);
}

/** About 0.1 s of openssl: make them once per test file. */
export async function makeTestCertificates(): Promise<TestCertificates> {
  const dir = await mkdtemp(join(tmpdir(), "sj-tls-"));
  await makeCa(dir, "ca");
  await makeCa(dir, "other-ca");
  await makeSigned(
    dir,
    "server",
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  await makeSigned(dir, "client", "extendedKeyUsage=clientAuth\n");
  const at = (file: string): string => join(dir, file);
  return {
    dir,
    caFile: at("ca.crt"),
    serverCertFile: at("server.crt"),
    serverKeyFile: at("server.key"),
    clientCertFile: at("client.crt"),
    clientKeyFile: at("client.key"),
    otherCaFile: at("other-ca.crt"),
    read: (path) => readFile(path),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** redis-server arguments: TLS only on `port` (no plain port), client certificates required. */
export function tlsServerArgs(certificates: TestCertificates, port: number): string[] {
  return [
    "--port",
    "0",
    "--tls-port",
    String(port),
    "--tls-cert-file",
    certificates.serverCertFile,
    "--tls-key-file",
    certificates.serverKeyFile,
    "--tls-ca-cert-file",
    certificates.caFile,
    "--tls-auth-clients",
    "yes",
  ];
}

/** A TLS-only redis-server for one test file, requiring client certificates. */
export interface TlsRedisServer {
  readonly port: number;
  /** rediss://127.0.0.1:port */
  readonly url: string;
  /** A client with the CA and client certificate; closed by stop(). */
  client(): Redis;
  stop(): Promise<void>;
}

export async function startTlsRedis(certificates: TestCertificates): Promise<TlsRedisServer> {
  const dir = await mkdtemp(join(tmpdir(), "sj-redis-tls-"));
  const port = await freePort();
  const child = await spawnRedisServer({ port, dir, extraArgs: tlsServerArgs(certificates, port) });
  const killOnExit = (): void => void child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const tls = {
    ca: await certificates.read(certificates.caFile),
    cert: await certificates.read(certificates.clientCertFile),
    key: await certificates.read(certificates.clientKeyFile),
  };
  const clients: Redis[] = [];
  return {
    port,
    url: `rediss://127.0.0.1:${port}`,
    client() {
      const redis = new Redis({ host: "127.0.0.1", port, tls, protocol: 2 });
      clients.push(redis);
      return redis;
    },
    async stop() {
      for (const client of clients) client.disconnect();
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
      process.off("exit", killOnExit);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `redis.tls` for mutual TLS with these certificates (the client's certificate and the CA). */
export function mutualTlsConfig(
  certificates: TestCertificates,
  overrides: Partial<RedisTlsConfig> = {},
): RedisTlsConfig {
  return {
    caFile: certificates.caFile,
    certFile: certificates.clientCertFile,
    keyFile: certificates.clientKeyFile,
    serverName: "",
    ...overrides,
  };
}
