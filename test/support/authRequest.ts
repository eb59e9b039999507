import { request as httpRequest } from "node:http";

/** An Authorization header of HTTP basic auth for `user:password`. */
export const basic = (text: string): string => `Basic ${Buffer.from(text).toString("base64")}`;

/** An Authorization header of a bearer token. */
export const bearer = (token: string): string => `Bearer ${token}`;

export interface AuthAnswer {
  status: number;
  /** The WWW-Authenticate challenge of a 401, else null. */
  challenge: string | null;
  text: string;
}

interface AuthRequest {
  method?: string;
  /** The Authorization header; none when undefined. */
  authorization?: string;
  /** Every other header, sent as given (fetch would add or refuse some: Origin, Sec-Fetch-*). */
  headers?: Record<string, string>;
  body?: string;
}

/**
 * One request with credentials, as the HTTP auth, roles and console actions tests send it: the
 * status, the challenge and the body as text.
 */
export function authRequest(url: string, options: AuthRequest = {}): Promise<AuthAnswer> {
  const headers = {
    ...(options.authorization === undefined ? {} : { authorization: options.authorization }),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: options.method ?? "GET", headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          challenge: response.headers["www-authenticate"] ?? null,
          text: Buffer.concat(chunks).toString(),
        }),
      );
    });
    request.on("error", reject);
    request.end(options.body);
  });
}
