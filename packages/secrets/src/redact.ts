/**
 * Redaction of secrets in text erg stores or logs (job scripts, stdout/stderr tails) and in
 * structured log lines. Redaction is a safety net for what a user's job or template puts in
 * plain sight; sealed columns and views without secret fields are the first line.
 */

export const REDACTED = '[redacted]';

// erg API tokens (erg_) and run tokens (ergr_): 32 random bytes, base64url (43 characters).
const ERG_TOKEN = /\bergr?_[A-Za-z0-9_-]{20,}/g;
// A whole PEM or OpenSSH private key block; an unterminated one (a log tail cut inside) to the end.
const KEY_BLOCK = /-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(-----END ([A-Z0-9]+ )*PRIVATE KEY-----|$)/g;
// The end of a key block whose beginning was cut off (a tail that starts inside it).
const KEY_BLOCK_END = /^[\s\S]*?-----END ([A-Z0-9]+ )*PRIVATE KEY-----/;
// `password=…`, `GITHUB_TOKEN=…`, `--token=…`, `"secret": "…"`, `api_key: …`: names that END in one of
// these words, so `ERG_TOKEN_FILE=/path` (a path, not a secret) stays readable.
const NAMED_VALUE =
  /(\b(?:[A-Za-z0-9]+[_.-])*(?:password|passwd|passphrase|token|secret|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret)["']?)(\s*[=:]\s*)("[^"\n]*"|'[^'\n]*'|[^\s"'&;,]+)/gi;
// Credentials in URLs: scheme://user:password@host.
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi;

/** Replaces erg tokens, private key blocks, `name=value` secrets and URL passwords in `text` with `[redacted]`. */
export function redactSecrets(text: string): string {
  let out = text.replace(KEY_BLOCK, REDACTED);
  if (!out.includes('-----BEGIN ')) out = out.replace(KEY_BLOCK_END, REDACTED);
  out = out.replace(ERG_TOKEN, REDACTED);
  out = out.replace(NAMED_VALUE, (_m, name: string, sep: string, value: string) => {
    const quote = value[0] === '"' || value[0] === "'" ? value[0] : '';
    return `${name}${sep}${quote}${REDACTED}${quote}`;
  });
  return out.replace(URL_PASSWORD, `$1${REDACTED}@`);
}

/**
 * pino's `redact` option for every erg logger: credentials in request headers and any field
 * named like a secret, at the top level or one level down.
 */
export const LOG_REDACTION = {
  paths: [
    'req.headers.authorization',
    'req.headers.cookie',
    'req.headers["x-erg-token"]',
    'res.headers["set-cookie"]',
    'headers.authorization',
    'headers.cookie',
    'authorization',
    'privateKey',
    '*.privateKey',
    'token',
    '*.token',
    'secret',
    '*.secret',
    'password',
    '*.password',
    'webhookSecret',
    '*.webhookSecret',
    'webhook.secret',
    '*.webhook.secret',
  ],
  censor: REDACTED,
};
