/**
 * The errors Redis answers with, classified once, where they leave the client: each becomes a
 * RedisError with a code. Callers branch on the code; nothing else reads an error's message to
 * tell what it is. The message itself is kept as Redis (or the script) worded it: it is what the
 * operator sees.
 */
export const RedisErrorCode = {
  /** The stream does not exist (the sweep's and requireStream's refusal). */
  NOSTREAM: "NOSTREAM",
  /** No such consumer group on the stream. */
  NOGROUP: "NOGROUP",
  /** The key holds another type. */
  WRONGTYPE: "WRONGTYPE",
  /** The ACL user may not run the command or touch the key. */
  NOPERM: "NOPERM",
  /** The lease is not ours, or a newer leader wrote to the stream: nothing was changed. */
  FENCED: "FENCED",
  /** A stream has used up its ids: XADD would fail. */
  IDSEXHAUSTED: "IDSEXHAUSTED",
  /** The janitor's consumer name holds entries the janitor did not put there. */
  CONSUMERBUSY: "CONSUMERBUSY",
  /** XINFO of a missing key ("ERR no such key"). */
  NOSUCHKEY: "NOSUCHKEY",
  /** Any other error Redis answered with: a command's, or a script's own failure. */
  OTHER: "OTHER",
} as const;

export type RedisErrorCode = (typeof RedisErrorCode)[keyof typeof RedisErrorCode];

/**
 * Codes that Redis (or one of the scripts, whose typed modules list theirs) puts first in the
 * message: every code but the two that are not a leading word.
 */
const LEADING_CODES: ReadonlySet<string> = new Set<string>(
  Object.values(RedisErrorCode).filter((code) => code !== "NOSUCHKEY" && code !== "OTHER"),
);

/** An error Redis answered with (or a refusal in Redis' terms), with its code. */
export class RedisError extends Error {
  override name = "RedisError";
  readonly code: RedisErrorCode;

  constructor(code: RedisErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  /** The message without its leading code word, when it starts with one. */
  get detail(): string {
    const space = this.message.indexOf(" ");
    return space !== -1 && this.message.slice(0, space) === this.code
      ? this.message.slice(space + 1)
      : this.message;
  }
}

/** The code of an error message as Redis words it (its first word; XINFO's "no such key"). */
export function codeOfMessage(message: string): RedisErrorCode {
  const space = message.indexOf(" ");
  const first = space === -1 ? message : message.slice(0, space);
  if (LEADING_CODES.has(first)) return first as RedisErrorCode;
  if (/\bno such key\b/iu.test(message)) return "NOSUCHKEY";
  return "OTHER";
}

/** ioredis' error for a reply Redis sent (the server is up), as opposed to a connection failure. */
function isAnswer(error: unknown): error is Error {
  return error instanceof Error && error.name === "ReplyError";
}

/**
 * The classification: a RedisError for an error Redis answered with (the same one when it is
 * already classified), undefined for anything else (connection failures, timeouts, bugs).
 */
export function redisErrorOf(error: unknown): RedisError | undefined {
  if (error instanceof RedisError) return error;
  if (!isAnswer(error)) return undefined;
  return new RedisError(codeOfMessage(error.message), error.message, { cause: error });
}

/** `error` classified when Redis answered it, else as it is: for rethrowing at the boundary. */
export function classified(error: unknown): unknown {
  return redisErrorOf(error) ?? error;
}

/** An error a script reported inside its reply (it stopped, keeping what it did), classified. */
export function errorInReply(message: string): RedisError {
  return new RedisError(codeOfMessage(message), message);
}
