import { readFileSync } from 'node:fs';
import { KEY_BYTES, SecretBox, SecretError } from './secret-box';

/**
 * Where the apps' secret keys come from: the four ERG_SECRET_KEY* variables as each app's config
 * parsed them. A key given inline wins over its file.
 */
export interface SecretKeySource {
  /** Base64 of 32 bytes. */
  ERG_SECRET_KEY?: string | undefined;
  /** A file holding base64 of 32 bytes (trailing newline allowed). */
  ERG_SECRET_KEY_FILE?: string | undefined;
  /** The key being rotated away from: opens values, never seals. */
  ERG_SECRET_KEY_PREVIOUS?: string | undefined;
  ERG_SECRET_KEY_PREVIOUS_FILE?: string | undefined;
}

export const MAKE_KEY_HINT =
  'make one with `install -d -m 700 /etc/erg && (umask 077 && openssl rand -base64 32 > /etc/erg/secret.key)` ' +
  'and start erg with ERG_SECRET_KEY_FILE=/etc/erg/secret.key (or ERG_SECRET_KEY=<that base64>); ' +
  'keep it: without it the stored SSH keys and webhook secrets cannot be read';

function decodeKey(text: string, from: string): Buffer {
  const trimmed = text.trim();
  const key = Buffer.from(trimmed, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || key.length !== KEY_BYTES) {
    throw new SecretError('ERG_SECRET_BAD_KEY', `${from} must be base64 of ${KEY_BYTES} random bytes (got ${key.length} bytes); ${MAKE_KEY_HINT}`);
  }
  return key;
}

function readKeyFile(file: string, variable: string): Buffer {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SecretError(
      'ERG_SECRET_BAD_KEY',
      `no secret key: ${variable}=${file} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? (err as Error).message})`}; ${MAKE_KEY_HINT}`,
    );
  }
  return decodeKey(text, `${variable} (${file})`);
}

function loadOne(inline: string | undefined, file: string | undefined, name: string): Buffer | null {
  if (inline !== undefined && inline !== '') return decodeKey(inline, name);
  if (file !== undefined && file !== '') return readKeyFile(file, `${name}_FILE`);
  return null;
}

/** Builds the process's one SecretBox; throws SecretError (with how to make a key) when there is none. */
export function secretBoxFrom(source: SecretKeySource): SecretBox {
  const key = loadOne(source.ERG_SECRET_KEY, source.ERG_SECRET_KEY_FILE, 'ERG_SECRET_KEY');
  if (!key) throw new SecretError('ERG_SECRET_BAD_KEY', `no secret key is configured; ${MAKE_KEY_HINT}`);
  const previous = loadOne(source.ERG_SECRET_KEY_PREVIOUS, source.ERG_SECRET_KEY_PREVIOUS_FILE, 'ERG_SECRET_KEY_PREVIOUS');
  return new SecretBox(key, previous ? [previous] : []);
}
