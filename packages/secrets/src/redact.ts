/**
 * Redaction of secrets in text erg stores or logs (job scripts, stdout/stderr tails, suite spec
 * text) and in structured log lines. Redaction is a safety net for what a user's job or template
 * puts in plain sight; sealed columns and views without secret fields are the first line.
 *
 * Job output is hostile input: every pattern here is linear in the text (bounded repetitions,
 * no nested quantifiers that can match the same characters two ways), so no output, however
 * built, makes redaction the slow part of a tick. bench/redact.js measures it. The function
 * works on any chunk of a stream (a block cut at either edge of a chunk is still removed).
 */

export const REDACTED = '[redacted]';

// erg API tokens (erg_) and run tokens (ergr_): 32 random bytes, base64url (43 characters).
const ERG_TOKEN = /\bergr?_[A-Za-z0-9_-]{20,}/g;
// Other vendors' tokens, by their documented prefixes: GitHub (classic and fine-grained),
// GitLab personal access tokens, Slack bot/user/app/refresh tokens, AWS access key ids.
const VENDOR_TOKEN = /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[A-Z0-9]{16}\b)/g;
// A bearer token outside an Authorization header (JSON, prose): long enough not to be a word.
const BEARER = /\b(Bearer[ \t]{1,8})[A-Za-z0-9._~+/-]{16,}=*/gi;

// Private key blocks: PEM (`RSA`, `EC`, `ENCRYPTED`, none), OpenSSH and PGP (`… KEY BLOCK`), with
// the spacing people and tools get wrong (`-----BEGIN  RSA PRIVATE KEY-----`, `----- BEGIN …`).
// Every repetition is bounded, so a failed attempt costs a constant.
const SP = '[ \\t]';
const KEY_HEADER = (word: 'BEGIN' | 'END' | '(BEGIN|END)') =>
  `-----${SP}{0,8}${word}${SP}{1,8}(?:[A-Z0-9]{1,16}${SP}{1,8}){0,3}(?:PRIVATE|SECRET)${SP}{1,8}KEY(?:${SP}{1,8}BLOCK)?${SP}{0,8}-----`;
/** A key block's first or last line; group 1 says which (the streaming redactor tracks blocks across segments). */
export const KEY_HEADER_LINE = new RegExp(KEY_HEADER('(BEGIN|END)'), 'g');
// A whole block; an unterminated one (a log tail cut inside) to the end.
const KEY_BLOCK = new RegExp(`${KEY_HEADER('BEGIN')}[\\s\\S]*?(?:${KEY_HEADER('END')}|$)`, 'g');
// The end of a key block whose beginning was cut off (a tail that starts inside it).
const KEY_BLOCK_END = new RegExp(`^[\\s\\S]*?${KEY_HEADER('END')}`);
const ANY_BEGIN = new RegExp(`-----${SP}{0,8}BEGIN${SP}`);

// Credentials in URLs: scheme://user:password@host.
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s:/@]{1,256}:)[^\s@/]{1,256}@/gi;

// `name=value` / `name: value` / `"name": "value"`: a name (not preceded by a name character,
// at most 128 long), an optional closing quote, and the separator. Whether the name is a
// secret's is decided in code (isSecretName), and only then is the value read.
// The regex already asks for a name ending in one of the words (cheap: most `x=y` in job output
// never reach the code).
const NAME_AND_SEPARATOR =
  /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{0,120}(?:password|passwd|passphrase|token|secret|credentials?|key|authorization))(["']?)(\s*[=:]\s*)/gi;
// The longest quoted value looked for; an unclosed quote is redacted to the end of its line.
const MAX_QUOTED = 4096;
const AUTH_SCHEME = /^(?:Bearer|Basic|Token|Digest|Bot|Negotiate)[ \t]{1,8}/i;

/** Words that end a secret's name: `PGPASSWORD`, `webhookSecret`, `accessToken`, `db_password`. */
const SECRET_WORD = /(?:password|passwd|passphrase|token|secret|credentials?)$/i;
/** What makes a `…key` a secret: `apiKey`, `ACCESS_KEY`, `private-key`, `signingKey`. */
const KEY_QUALIFIER = /(?:api|access|private|secret|client|signing|encryption|ssh|master|auth|license|account|service|app|webhook|hmac|deploy)$/i;

/**
 * Whether `name` names a secret. Only its last part counts, so `ERG_TOKEN_FILE` (a path),
 * `max_tokens` and `sort_key` stay readable while `PGPASSWORD`, `webhookSecret` and
 * `AWS_SECRET_ACCESS_KEY` do not.
 */
export function isSecretName(name: string): boolean {
  const parts = name.split(/[_.-]+/).filter((p) => p.length > 0);
  const last = parts.at(-1);
  if (last === undefined) return false;
  if (SECRET_WORD.test(last) || /^(?:proxy-)?authorization$/i.test(name.replace(/^-+/, ''))) return true;
  if (!/key$/i.test(last)) return false;
  if (last.length > 3) {
    // Run together: camelCase or lower case after a qualifier (`apiKey`, `apikey`), or any ALL-CAPS name (`APIKEY`).
    return KEY_QUALIFIER.test(last.slice(0, -3)) || /^[A-Z0-9]+KEY$/.test(last);
  }
  // `…_key`: after a qualifier (`api_key`, `AWS_SECRET_ACCESS_KEY`), or any upper-case variable (`STRIPE_KEY`).
  const before = parts.at(-2);
  return before !== undefined && (KEY_QUALIFIER.test(before) || /^[A-Z0-9_.-]+$/.test(name));
}

function indentAt(text: string, lineStart: number): number {
  let i = lineStart;
  while (text[i] === ' ' || text[i] === '\t') i++;
  return i - lineStart;
}

/**
 * Where a YAML value's continuation lines end: a block scalar (`|`, `>`) or a multi-line plain
 * scalar goes on while lines are indented more than its key (blank lines included).
 */
function endOfContinuation(text: string, from: number, keyIndent: number): number {
  let end = from;
  while (text[end] === '\n') {
    let next = text.indexOf('\n', end + 1);
    if (next === -1) next = text.length;
    const line = text.slice(end + 1, next);
    if (line.trim() !== '' && indentAt(text, end + 1) <= keyIndent) break;
    end = next;
  }
  return end;
}

/** Where the value that starts at `start` ends (exclusive), for a value that is to be redacted. */
function endOfValue(text: string, start: number, yamlish: boolean): number {
  const first = text[start];
  if (first === '"' || first === "'") {
    const limit = Math.min(text.length, start + 1 + MAX_QUOTED);
    let i = start + 1;
    for (; i < limit; i++) {
      const c = text[i];
      if (c === first) return i + 1;
      if (c === '\\' && first === '"') i++;
      // `=` values end at the line; YAML's quoted scalars may fold over lines.
      else if (c === '\n' && !yamlish) return i;
    }
    return i;
  }
  let i = start;
  while (i < text.length && !/[\s"'&;,]/.test(text[i]!)) i++;
  return i;
}

/** Replaces the values of secret-named fields, scanning the text once. */
function redactNamedValues(text: string): string {
  const out: string[] = [];
  let copied = 0;
  // The start of the line of the current match, tracked as the scan moves forward (never scanned back).
  let lineStart = 0;
  let lineScan = 0;
  NAME_AND_SEPARATOR.lastIndex = 0;
  for (let m = NAME_AND_SEPARATOR.exec(text); m !== null; m = NAME_AND_SEPARATOR.exec(text)) {
    const [, name, quote, separator] = m as unknown as [string, string, string, string];
    const valueStart = m.index + m[0].length;
    if (valueStart >= text.length || !isSecretName(name) || (quote !== '' && text[m.index - 1] !== quote)) continue;
    for (; lineScan < m.index; lineScan++) if (text[lineScan] === '\n') lineStart = lineScan + 1;
    let start = valueStart;
    const yamlish = separator.includes(':');
    const first = text[start];
    const quoted = first === '"' || first === "'";
    // Authorization: keep the scheme (`Bearer`), lose the credentials.
    const scheme = AUTH_SCHEME.exec(text.slice(quoted ? start + 1 : start, (quoted ? start + 1 : start) + 24))?.[0];
    let end: number;
    if (quoted) {
      end = endOfValue(text, start, yamlish);
      const closed = end > start + 1 && text[end - 1] === first;
      out.push(text.slice(copied, start + 1), scheme ?? '', REDACTED, closed ? first! : '');
      copied = end;
      NAME_AND_SEPARATOR.lastIndex = end;
      continue;
    }
    if (scheme) start += scheme.length;
    end = endOfValue(text, start, yamlish);
    if (end === start) continue;
    // YAML: a block scalar header or a plain scalar that ends its line may go on below.
    if (yamlish && (end === text.length || text[end] === '\n')) end = endOfContinuation(text, end, indentAt(text, lineStart));
    out.push(text.slice(copied, start), REDACTED);
    copied = end;
    NAME_AND_SEPARATOR.lastIndex = end;
  }
  out.push(text.slice(copied));
  return out.join('');
}

/**
 * Replaces erg and other vendors' tokens, private key blocks, `name=value` secrets (any name
 * ending in password/token/secret/…, camelCase or not) and URL passwords in `text` with
 * `[redacted]`. Linear in the text; safe on any chunk of a stream.
 */
export function redactSecrets(text: string): string {
  let out = text.replace(KEY_BLOCK, REDACTED);
  if (!ANY_BEGIN.test(out)) out = out.replace(KEY_BLOCK_END, REDACTED);
  out = out.replace(ERG_TOKEN, REDACTED);
  out = out.replace(VENDOR_TOKEN, REDACTED);
  out = redactNamedValues(out);
  out = out.replace(BEARER, `$1${REDACTED}`);
  return out.replace(URL_PASSWORD, `$1${REDACTED}@`);
}

const SECRET_FIELDS = [
  'privateKey', 'token', 'secret', 'password', 'passphrase', 'webhookSecret', 'apiKey', 'accessToken', 'refreshToken',
  'clientSecret', 'secretKey',
];

/**
 * pino's `redact` option for every erg logger: credentials in request headers and any field
 * named like a secret, at the top level or one level down. (pino matches exact keys; names
 * outside this list are left to redactSecrets where text is stored.)
 */
export const LOG_REDACTION = {
  paths: [
    'req.headers.authorization',
    'req.headers["proxy-authorization"]',
    'req.headers.cookie',
    'req.headers["x-erg-token"]',
    'res.headers["set-cookie"]',
    'headers.authorization',
    'headers["proxy-authorization"]',
    'headers.cookie',
    'authorization',
    ...SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]),
    'webhook.secret',
    '*.webhook.secret',
  ],
  censor: REDACTED,
};
