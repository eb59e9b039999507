import { connect, type ConnectionOptions } from "node:tls";
import { describeTlsError } from "./describeTlsError.js";

/** ioredis: "failed to connect to sentinel 10.0.0.1:26379 because Connection is closed". */
const FAILED_SENTINEL = /^failed to connect to sentinel (.+):(\d+) because /u;

/**
 * Why a Sentinel refused our TLS handshake, which ioredis cannot tell: its short-lived Sentinel
 * clients ignore their connection errors, so every failure reads "All sentinels are unreachable
 * ... Connection is closed". On such a failure this makes one handshake of its own with the same
 * TLS settings and keeps the reason ("TLS handshake failed: ... unknown CA ..."), until cleared.
 */
export class SentinelTlsProbe {
  private problem: string | undefined;
  private probing = false;

  constructor(
    private readonly tls: ConnectionOptions,
    private readonly timeoutMs: number,
  ) {}

  /** What the last probe found, if the handshake failed. */
  get tlsProblem(): string | undefined {
    return this.problem;
  }

  /** Called with ioredis' "sentinelError" events; probes the Sentinel it names, one at a time. */
  onSentinelError(error: Error): void {
    const match = FAILED_SENTINEL.exec(error.message);
    if (match === null || this.probing) return;
    this.probing = true;
    const host = (match[1] ?? "").replace(/^\[|\]$/gu, "");
    void handshakeError(host, Number(match[2]), this.tls, this.timeoutMs).then((failure) => {
      this.probing = false;
      this.problem = failure === undefined ? undefined : describeTlsError(failure);
    });
  }

  clear(): void {
    this.problem = undefined;
  }
}

/**
 * One TLS connection to host:port that sends PING: resolves the error if the handshake (or, with
 * TLS 1.3, the server's verdict on our client certificate, which comes after it) fails, else
 * undefined. Never rejects.
 */
function handshakeError(
  host: string,
  port: number,
  tls: ConnectionOptions,
  timeoutMs: number,
): Promise<Error | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ ...tls, host, port, timeout: timeoutMs });
    const finish = (error: Error | undefined): void => {
      socket.destroy();
      resolve(error);
    };
    socket.once("secureConnect", () => socket.write("PING\r\n"));
    socket.once("data", () => finish(undefined));
    socket.once("error", (error: Error) => finish(error));
    socket.once("timeout", () => finish(undefined));
    socket.once("close", () => finish(undefined));
  });
}
