/**
 * Names the TLS setting behind a failed handshake. Pure functions of the error, so tests need no
 * server.
 */

const UNKNOWN_CA = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
]);

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|SELF_SIGNED|DEPTH_ZERO)/u;

/**
 * "TLS handshake failed: <reason>" for an error raised while establishing TLS, else undefined.
 * The reasons name the setting that fixes them.
 */
export function describeTlsError(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  const codeText = typeof code === "string" ? code : "";
  const message = shortTlsMessage(error.message);
  let reason: string | undefined;
  if (UNKNOWN_CA.has(codeText)) {
    reason = `the server's certificate is signed by an unknown CA (${message}); set redis.tls.caFile to the CA that signed it`;
  } else if (codeText === "ERR_TLS_CERT_ALTNAME_INVALID") {
    reason = `certificate name mismatch (${message}); connect by a name the certificate lists, or set redis.tls.serverName`;
  } else if (/certificate required/iu.test(message) || codeText.includes("CERTIFICATE_REQUIRED")) {
    reason = `the server requires a client certificate (${message}); set redis.tls.certFile and redis.tls.keyFile (mutual TLS)`;
  } else if (codeText === "CERT_HAS_EXPIRED" || codeText === "CERT_NOT_YET_VALID") {
    reason = `the server's certificate is not valid now (${message})`;
  } else if (/before secure TLS connection was established/u.test(message)) {
    reason = `the server closed the connection during the handshake (${message}); is it a TLS port, and does it accept this client certificate?`;
  } else if (TLS_CODE.test(codeText) || /\b(ssl|tls)\b/iu.test(message)) {
    reason = message;
  }
  return reason === undefined ? undefined : `TLS handshake failed: ${reason}`;
}

/**
 * With TLS 1.3 the client finishes its side of the handshake before the server checks the client
 * certificate; a refusal then often arrives as a reset of the first write rather than as an alert.
 */
export function describeResetAfterHandshake(error: unknown): string | undefined {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  if (code !== "ECONNRESET" && code !== "EPIPE") return undefined;
  return `TLS handshake failed: the server closed the connection right after the handshake (${code}); it requires a client certificate (set redis.tls.certFile and redis.tls.keyFile) or refused this one`;
}

/** OpenSSL messages carry a code, a function and a source location; keep the reason. */
function shortTlsMessage(message: string): string {
  const reason = /SSL routines:[^:]*:([^:]+)/u.exec(message)?.[1];
  return (reason ?? message.split("\n")[0] ?? message).trim();
}
