/**
 * SecretBox: authenticated encryption of secrets stored in Postgres (clusters' SSH private keys,
 * suites' webhook secrets) with AES-256-GCM.
 *
 * Glossary
 * - sealed value: `erg1:<keyId>:<iv base64>:<ciphertext+tag base64>`, what the column holds.
 * - key id: the first 8 hex digits of SHA-256 of the key, so a sealed value says which key sealed
 *   it and rotation knows what to re-seal, without revealing anything about the key.
 * - context: the additional authenticated data, naming the row and column the value belongs to
 *   (`cluster:<id>:private_key`); a ciphertext copied into another row fails to open.
 * - legacy value: plaintext written before sealing existed; it never starts with `erg1:`.
 *
 * Error messages name the context and key ids, never the value.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ErgError } from '@erg/spec/errors';

export const SEALED_PREFIX = 'erg1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

export type SecretErrorCode = 'ERG_SECRET_MALFORMED' | 'ERG_SECRET_UNKNOWN_KEY' | 'ERG_SECRET_UNREADABLE' | 'ERG_SECRET_BAD_KEY';

/** A secret that cannot be sealed or opened; the catalog (packages/spec/src/errors.ts) lists the codes. */
export class SecretError extends ErgError<SecretErrorCode> {}

/** `keyId(key)`: first 8 hex digits of SHA-256 of the raw key. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** Whether a stored value is sealed (else it is a legacy plaintext value). */
export function isSealed(value: string): boolean {
  return value.startsWith(SEALED_PREFIX);
}

export class SecretBox {
  private readonly current: { id: string; key: Buffer };
  private readonly byId = new Map<string, Buffer>();

  /**
   * @param key the key that seals (32 bytes)
   * @param previous keys accepted for opening only, while rotating away from them
   */
  constructor(key: Buffer, previous: readonly Buffer[] = []) {
    for (const k of [key, ...previous]) {
      if (k.length !== KEY_BYTES) throw new SecretError('ERG_SECRET_BAD_KEY', `a secret key must be ${KEY_BYTES} bytes, got ${k.length}`);
    }
    this.current = { id: keyId(key), key };
    // The current key wins when a previous key is the same one (a rotation not yet begun).
    for (const k of [...previous].reverse()) this.byId.set(keyId(k), k);
    this.byId.set(this.current.id, key);
  }

  /** Id of the key new values are sealed with. */
  get keyId(): string {
    return this.current.id;
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED_PREFIX}${this.current.id}:${iv.toString('base64')}:${body.toString('base64')}`;
  }

  /** Opens a sealed value; throws SecretError when it is not one, or not for this context, or its key is unknown. */
  open(sealed: string, context: string): string {
    const parts = sealed.split(':');
    if (parts.length !== 4 || `${parts[0]}:` !== SEALED_PREFIX) {
      throw new SecretError('ERG_SECRET_MALFORMED', `the stored secret of ${context} is not a sealed value (erg1:<key id>:<iv>:<ciphertext>)`);
    }
    const [, id, ivText, bodyText] = parts as [string, string, string, string];
    const key = this.byId.get(id);
    if (!key) {
      throw new SecretError(
        'ERG_SECRET_UNKNOWN_KEY',
        `the secret of ${context} was sealed with key ${id}, but this process has key ${this.current.id}` +
          `${this.byId.size > 1 ? ` and previous ${[...this.byId.keys()].filter((k) => k !== this.current.id).join(', ')}` : ''}; ` +
          'start it with ERG_SECRET_KEY_PREVIOUS (or ERG_SECRET_KEY_PREVIOUS_FILE) set to the key that sealed it',
      );
    }
    const iv = Buffer.from(ivText, 'base64');
    const body = Buffer.from(bodyText, 'base64');
    if (iv.length !== IV_BYTES || body.length < TAG_BYTES) {
      throw new SecretError('ERG_SECRET_MALFORMED', `the stored secret of ${context} is truncated or not base64`);
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      // GCM says only "unable to authenticate": the value was altered or belongs to another row.
      throw new SecretError('ERG_SECRET_UNREADABLE', `the stored secret of ${context} does not authenticate: it was altered, or it was sealed for another row`);
    }
  }

  /** Opens what a column holds: a sealed value, or a legacy plaintext value (returned as it is). */
  openStored(stored: string, context: string): string {
    return isSealed(stored) ? this.open(stored, context) : stored;
  }

  /** Whether a stored value should be (re-)sealed: plaintext, or sealed with a key other than the current one. */
  needsSealing(stored: string): boolean {
    return !isSealed(stored) || stored.split(':')[1] !== this.current.id;
  }
}
