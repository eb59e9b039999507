import type { JanitorConfig } from "../core/configTypes.js";
import type { StatusReport } from "../core/groupStatus.js";
import { readSmallFile, SECRET_FILE_MAX_BYTES } from "../config/readSmallFile.js";
import { httpGet } from "./httpGet.js";

/** What a janitor answered at GET /status.json, or why there is no answer. */
export type StatusAnswer =
  | { ok: true; url: string; report: StatusReport; /** The body exactly as served. */ body: string }
  | {
      ok: false;
      url: string;
      /** One line for the operator, naming the URL (and http.auth when it was refused). */
      problem: string;
      /** True when nothing answered at all (not running, wrong address, too slow). */
      unreachable: boolean;
    };

type HttpSettings = Pick<JanitorConfig["http"], "host" | "port" | "auth">;

/**
 * The URL of /status.json: `url` (a base or the full path) when given, else the janitor's own
 * http.host:http.port, where a wildcard address (0.0.0.0, ::) means this machine.
 */
function statusUrl(http: HttpSettings, url: string | undefined): string {
  if (url !== undefined) {
    const base = url.replace(/\/+$/u, "");
    return base.endsWith("/status.json") ? base : `${base}/status.json`;
  }
  const wildcard = http.host === "" || http.host === "0.0.0.0" || http.host === "::";
  const host = wildcard ? "127.0.0.1" : http.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${http.port}/status.json`;
}

/**
 * The Authorization header a protected janitor expects (README "HTTP authentication"): the bearer token
 * file's content, or the first `user:password` line of the basic-auth file.
 */
async function authorization(auth: HttpSettings["auth"]): Promise<string | undefined> {
  const [key, path] =
    auth.bearerTokenFile !== ""
      ? ["bearerTokenFile", auth.bearerTokenFile]
      : ["basicAuthFile", auth.basicAuthFile];
  if (path === "") return undefined;
  const read = await readSmallFile(path, SECRET_FILE_MAX_BYTES);
  if (!read.ok) throw new Error(`cannot read http.auth.${key} (${path}): expected ${read.problem}`);
  if (key === "bearerTokenFile") return `Bearer ${read.text.trim()}`;
  const line = read.text.split(/\r?\n/u).find((candidate) => candidate.trim() !== "");
  if (line === undefined)
    throw new Error(`http.auth.basicAuthFile (${path}) has no user:password line`);
  return `Basic ${Buffer.from(line.trim()).toString("base64")}`;
}

function isStatusReport(value: unknown): value is StatusReport {
  if (typeof value !== "object" || value === null) return false;
  const report = value as Partial<StatusReport>;
  return Array.isArray(report.groups) && typeof report.leader === "object";
}

/**
 * Asks a running janitor for its verdicts (GET /status.json), with the configured credentials,
 * within `timeoutMs` for the whole exchange. Never throws: a janitor that does not answer, refuses
 * or answers something else is an answer too, in words.
 */
export async function fetchStatusReport(
  http: HttpSettings,
  options: {
    url?: string;
    timeoutMs: number;
    /** Ends the wait early (SIGINT). */
    signal?: AbortSignal;
  },
): Promise<StatusAnswer> {
  const url = statusUrl(http, options.url);
  const refused = (problem: string): StatusAnswer => ({
    ok: false,
    url,
    problem,
    unreachable: false,
  });
  let header: string | undefined;
  try {
    header = await authorization(http.auth);
  } catch (error) {
    return refused(error instanceof Error ? error.message : String(error));
  }
  let status: number;
  let body: string;
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal =
    options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  try {
    ({ status, body } = await httpGet(
      url,
      header === undefined ? {} : { authorization: header },
      signal,
    ));
  } catch (error) {
    if (options.signal?.aborted === true) return refused("interrupted");
    const why = timeout.aborted ? `within ${options.timeoutMs}ms` : `(${causeOf(error)})`;
    return {
      ok: false,
      url,
      unreachable: true,
      problem: `no janitor answered at ${url} ${why}: \`stream-janitor run\` must be running there; give its address with --url`,
    };
  }
  if (status === 401 || status === 403) {
    return refused(
      `the janitor at ${url} refused the request (HTTP ${status}): set http.auth.bearerTokenFile or http.auth.basicAuthFile to credentials it accepts`,
    );
  }
  if (status !== 200) return refused(`the janitor at ${url} answered HTTP ${status}`);
  let report: unknown;
  try {
    report = JSON.parse(body);
  } catch {
    report = undefined;
  }
  if (!isStatusReport(report)) {
    return refused(`${url} answered with something that is not a status report (is it a janitor?)`);
  }
  return { ok: true, url, report, body };
}

/** ECONNREFUSED, ENOTFOUND ...: the words of a connection error. */
function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return (error as NodeJS.ErrnoException).code ?? error.message;
}
