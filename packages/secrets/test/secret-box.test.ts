import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ErgError } from '@erg/spec';
import { SecretBox, SecretError, isSealed, keyId, secretBoxFrom } from '../src';

const KEY = randomBytes(32);
const OLD = randomBytes(32);
const CTX = 'cluster:11111111-1111-1111-1111-111111111111:private_key';

describe('SecretBox', () => {
  const box = new SecretBox(KEY);

  it('seals to erg1:<key id>:<iv>:<ciphertext+tag> and opens it again', () => {
    const sealed = box.seal('-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n', CTX);
    const [prefix, id, iv, body] = sealed.split(':');
    expect(prefix).toBe('erg1');
    expect(id).toBe(keyId(KEY));
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    expect(Buffer.from(iv!, 'base64')).toHaveLength(12);
    expect(Buffer.from(body!, 'base64').length).toBe(Buffer.byteLength('-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n') + 16);
    expect(sealed).not.toContain('OPENSSH');
    expect(box.open(sealed, CTX)).toBe('-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n');
  });

  it('uses a fresh IV every time', () => {
    expect(box.seal('same', CTX)).not.toBe(box.seal('same', CTX));
  });

  it('refuses a ciphertext moved to another row (the context is authenticated)', () => {
    const sealed = box.seal('secret', CTX);
    const err = (() => { try { box.open(sealed, 'cluster:22222222-2222-2222-2222-222222222222:private_key'); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(SecretError);
    expect(err).toMatchObject({ code: 'ERG_SECRET_UNREADABLE' });
    expect((err as Error).message).not.toContain('secret\n');
  });

  it("fails with one of erg's errors, named SecretError: not retryable, the server's own fault (500)", () => {
    const err = (() => { try { new SecretBox(Buffer.alloc(3)); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(ErgError);
    expect(err).toMatchObject({ name: 'SecretError', code: 'ERG_SECRET_BAD_KEY', status: 500, retryable: false, message: 'a secret key must be 32 bytes, got 3' });
  });

  it('refuses an altered ciphertext', () => {
    const sealed = box.seal('secret value', CTX);
    const parts = sealed.split(':');
    const body = Buffer.from(parts[3]!, 'base64');
    body[0] = body[0]! ^ 1;
    parts[3] = body.toString('base64');
    expect(() => box.open(parts.join(':'), CTX)).toThrow(expect.objectContaining({ code: 'ERG_SECRET_UNREADABLE' }));
  });

  it('names the key that sealed a value it cannot open, and how to provide it', () => {
    const sealed = new SecretBox(OLD).seal('x', CTX);
    expect(() => box.open(sealed, CTX)).toThrow(expect.objectContaining({ code: 'ERG_SECRET_UNKNOWN_KEY', message: expect.stringContaining(keyId(OLD)) }));
    expect(() => box.open(sealed, CTX)).toThrow(/ERG_SECRET_KEY_PREVIOUS/);
  });

  it('opens values of a previous key during rotation, seals only with the current one, and says what to re-seal', () => {
    const oldSealed = new SecretBox(OLD).seal('rotate me', CTX);
    const rotating = new SecretBox(KEY, [OLD]);
    expect(rotating.open(oldSealed, CTX)).toBe('rotate me');
    expect(rotating.needsSealing(oldSealed)).toBe(true);
    const resealed = rotating.seal('rotate me', CTX);
    expect(resealed.split(':')[1]).toBe(keyId(KEY));
    expect(rotating.needsSealing(resealed)).toBe(false);
    expect(rotating.needsSealing('-----BEGIN OPENSSH PRIVATE KEY-----')).toBe(true);
  });

  it('reads legacy plaintext through openStored, but open itself refuses it', () => {
    expect(isSealed('plain')).toBe(false);
    expect(box.openStored('plain legacy key', CTX)).toBe('plain legacy key');
    expect(() => box.open('plain legacy key', CTX)).toThrow(expect.objectContaining({ code: 'ERG_SECRET_MALFORMED' }));
    expect(() => box.open('erg1:abcd:xx', CTX)).toThrow(expect.objectContaining({ code: 'ERG_SECRET_MALFORMED' }));
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(expect.objectContaining({ code: 'ERG_SECRET_BAD_KEY' }));
  });
});

describe('secretBoxFrom', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'erg-secrets-'));

  it('takes the inline key over the file, and a previous key for opening', () => {
    const box = secretBoxFrom({ ERG_SECRET_KEY: KEY.toString('base64'), ERG_SECRET_KEY_FILE: '/nonexistent', ERG_SECRET_KEY_PREVIOUS: OLD.toString('base64') });
    expect(box.keyId).toBe(keyId(KEY));
    expect(box.open(new SecretBox(OLD).seal('x', CTX), CTX)).toBe('x');
  });

  it('reads a key file with a trailing newline (as openssl writes it)', () => {
    const file = path.join(dir, 'secret.key');
    writeFileSync(file, `${KEY.toString('base64')}\n`, { mode: 0o600 });
    expect(secretBoxFrom({ ERG_SECRET_KEY_FILE: file }).keyId).toBe(keyId(KEY));
  });

  it('refuses to go on without a key, saying how to make one', () => {
    expect(() => secretBoxFrom({})).toThrow(/openssl rand -base64 32/);
    expect(() => secretBoxFrom({ ERG_SECRET_KEY_FILE: path.join(dir, 'missing.key') })).toThrow(/missing\.key does not exist.*openssl rand -base64 32/);
  });

  it('refuses a key of the wrong size, without echoing it', () => {
    const short = randomBytes(16).toString('base64');
    const err = (() => { try { secretBoxFrom({ ERG_SECRET_KEY: short }); } catch (e) { return e as Error; } })();
    expect(err?.message).toMatch(/base64 of 32 random bytes \(got 16 bytes\)/);
    expect(err?.message).not.toContain(short);
  });
});
