import { utils } from 'ssh2';
import { hostKeyFingerprint } from './host-key';

/**
 * OpenSSH user certificates (`ssh-keygen -s CA -I ID -n PRINCIPALS -V VALIDITY key.pub` writes
 * `key-cert.pub`), read the way OpenSSH's PROTOCOL.certkeys lays them out. Pure: parses the text
 * of one certificate line, says which key it certifies and when it is valid. Whether the CA's
 * signature is good is the server's to judge (it holds the trusted CA keys); erg only needs what
 * the certificate says, to refuse one that cannot work and to warn before it expires.
 *
 * Glossary
 * - certificate type: the key algorithm of the blob, `ssh-ed25519-cert-v01@openssh.com` and the
 *   like; the certified key's own type is the same name without `-cert-v01@openssh.com`.
 * - validity: [validAfter, validBefore) in seconds since the epoch; OpenSSH writes 0 for "from the
 *   beginning" and 2^64-1 for "forever" (null here).
 */

/** The certificate types erg can authenticate with (the key types ssh2 can sign with). */
export const CERTIFICATE_TYPES = {
  'ssh-ed25519-cert-v01@openssh.com': 'ssh-ed25519',
  'ssh-rsa-cert-v01@openssh.com': 'ssh-rsa',
  'ecdsa-sha2-nistp256-cert-v01@openssh.com': 'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384-cert-v01@openssh.com': 'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521-cert-v01@openssh.com': 'ecdsa-sha2-nistp521',
} as const;
export type CertificateType = keyof typeof CERTIFICATE_TYPES;

/** Longest certificate line accepted (OpenSSH's own are under 2 KiB for Ed25519, ~3 KiB for RSA-4096). */
export const MAX_CERTIFICATE_CHARS = 16_384;

export interface SshCertificate {
  type: CertificateType;
  /** The certified key's type, e.g. ssh-ed25519. */
  keyType: string;
  /** The certified public key as an SSH blob (what `key.pub` holds), to compare with the private key's. */
  publicKey: Buffer;
  /** `SHA256:…` of the certified key, as `ssh-keygen -lf key.pub` prints it. */
  publicKeySha256: string;
  /** The whole certificate blob: what is offered to the server as the public key. */
  blob: Buffer;
  /** Decimal: the serial is a uint64. */
  serial: string;
  kind: 'user' | 'host';
  keyId: string;
  /** Empty: valid for every principal (OpenSSH refuses those for users unless the server says otherwise). */
  principals: string[];
  /** null: valid from the beginning of time (0). */
  validAfter: Date | null;
  /** null: valid forever (2^64-1). */
  validBefore: Date | null;
  criticalOptions: string[];
  extensions: string[];
  /** `SHA256:…` of the CA key that signed it. */
  signingKeySha256: string;
  /** The comment after the blob on the line, if any. */
  comment: string;
}

export type CertificateParse = { ok: true; certificate: SshCertificate } | { ok: false; message: string };

const FOREVER = 0xffffffffffffffffn;
/** Dates past this are shown as "forever": JavaScript dates end in the year 275760. */
const MAX_DATE_S = 8_640_000_000_000n;

/** Thrown by the reader on a short or malformed blob; turned into a parse failure. */
class Malformed extends Error {}

/** A bounds-checked reader of SSH wire types (RFC 4251 §5). */
class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}
  get done(): boolean {
    return this.at === this.buf.length;
  }
  uint32(): number {
    if (this.at + 4 > this.buf.length) throw new Malformed('ends inside a uint32');
    const v = this.buf.readUInt32BE(this.at);
    this.at += 4;
    return v;
  }
  uint64(): bigint {
    if (this.at + 8 > this.buf.length) throw new Malformed('ends inside a uint64');
    const v = this.buf.readBigUInt64BE(this.at);
    this.at += 8;
    return v;
  }
  bytes(): Buffer {
    const len = this.uint32();
    if (this.at + len > this.buf.length) throw new Malformed('a string runs past the end');
    const v = this.buf.subarray(this.at, this.at + len);
    this.at += len;
    return v;
  }
  text(): string {
    return this.bytes().toString('utf8');
  }
}

const sshString = (data: Buffer | string): Buffer => {
  const b = typeof data === 'string' ? Buffer.from(data) : data;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([len, b]);
};

/** `SHA256:…` of a key blob: the same digest OpenSSH prints for host and user keys alike. */
const sha256 = hostKeyFingerprint;

/** Names of a packed list of (name, data) pairs: critical options and extensions. */
function names(packed: Buffer): string[] {
  const r = new Reader(packed);
  const out: string[] = [];
  while (!r.done) {
    out.push(r.text());
    r.bytes();
  }
  return out;
}

function dateOf(seconds: bigint): Date | null {
  if (seconds === FOREVER || seconds > MAX_DATE_S) return null;
  return new Date(Number(seconds) * 1000);
}

/**
 * Parses one OpenSSH certificate, as the text of a `-cert.pub` file (`TYPE BASE64 [comment]`).
 * Never throws: a malformed input is a failure with a message that says what is wrong.
 */
export function parseCertificate(text: string): CertificateParse {
  if (text.length > MAX_CERTIFICATE_CHARS) return fail(`longer than ${MAX_CERTIFICATE_CHARS} characters`);
  const lines = text.trim().split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length !== 1) return fail(lines.length === 0 ? 'empty' : 'more than one line: send the one line of the -cert.pub file');
  const [type, base64, ...rest] = lines[0]!.trim().split(/\s+/);
  if (!type || !(type in CERTIFICATE_TYPES)) {
    const hint = type && /^(ssh-|ecdsa-)/.test(type) && !type.includes('-cert-') ? ' (this is a plain public key, not a certificate)' : '';
    return fail(`type ${JSON.stringify(type ?? '')} is not an OpenSSH certificate erg can use${hint}; expected one of ${Object.keys(CERTIFICATE_TYPES).join(', ')}`);
  }
  if (!base64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return fail('the certificate blob is not base64');
  const blob = Buffer.from(base64, 'base64');
  try {
    const certificate = parseBlob(type as CertificateType, blob, rest.join(' '));
    return { ok: true, certificate };
  } catch (err) {
    if (err instanceof Malformed) return fail(`the certificate blob is malformed (${err.message})`);
    throw err;
  }
}

function fail(why: string): CertificateParse {
  return { ok: false, message: `not an OpenSSH certificate erg can use: ${why}; sign erg's public key with \`ssh-keygen -s CA_KEY -I ID -n USER -V +8h erg_key.pub\` and send erg_key-cert.pub` };
}

function parseBlob(type: CertificateType, blob: Buffer, comment: string): SshCertificate {
  const r = new Reader(blob);
  const inner = r.text();
  if (inner !== type) throw new Malformed(`the blob says ${JSON.stringify(inner)}, the line says ${type}`);
  const keyType = CERTIFICATE_TYPES[type];
  r.bytes(); // nonce
  let publicKey: Buffer;
  switch (keyType) {
    case 'ssh-ed25519':
      publicKey = Buffer.concat([sshString(keyType), sshString(r.bytes())]);
      break;
    case 'ssh-rsa': {
      const e = r.bytes();
      const n = r.bytes();
      publicKey = Buffer.concat([sshString(keyType), sshString(e), sshString(n)]);
      break;
    }
    default: {
      const curve = r.bytes();
      const point = r.bytes();
      publicKey = Buffer.concat([sshString(keyType), sshString(curve), sshString(point)]);
    }
  }
  const serial = r.uint64();
  const kindCode = r.uint32();
  if (kindCode !== 1 && kindCode !== 2) throw new Malformed(`unknown certificate type ${kindCode}`);
  const keyId = r.text();
  const principalsReader = new Reader(r.bytes());
  const principals: string[] = [];
  while (!principalsReader.done) principals.push(principalsReader.text());
  const validAfter = r.uint64();
  const validBefore = r.uint64();
  const criticalOptions = names(r.bytes());
  const extensions = names(r.bytes());
  r.bytes(); // reserved
  const signingKey = r.bytes();
  r.bytes(); // signature
  if (!r.done) throw new Malformed('bytes after the signature');
  return {
    type,
    keyType,
    publicKey,
    publicKeySha256: sha256(publicKey),
    blob,
    serial: serial.toString(),
    kind: kindCode === 1 ? 'user' : 'host',
    keyId,
    principals,
    validAfter: validAfter === 0n ? null : dateOf(validAfter),
    validBefore: dateOf(validBefore),
    criticalOptions,
    extensions,
    signingKeySha256: sha256(signingKey),
    comment,
  };
}

/**
 * Why `certificate` cannot be used with `privateKey` (an OpenSSH or PEM private key erg accepts),
 * or null when it can: a user certificate of exactly that key.
 */
export function certificateKeyProblem(certificate: SshCertificate, privateKey: string | Buffer): string | null {
  if (certificate.kind !== 'user') return 'this is a host certificate (ssh-keygen -h); erg logs in with a user certificate (ssh-keygen -s without -h)';
  const parsed = utils.parseKey(privateKey);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || key instanceof Error) return 'the private key does not parse, so the certificate cannot be checked against it';
  const own = key.getPublicSSH();
  if (!own.equals(certificate.publicKey)) {
    return `it certifies the key ${certificate.publicKeySha256}, not this private key (${sha256(own)}): sign this key's .pub file`;
  }
  return null;
}

/** Where a certificate stands at `now`, for views, metrics and the scheduler. */
export type CertificateStatus = 'valid' | 'expiring' | 'expired' | 'not-yet-valid';

export interface CertificateWarningPolicy {
  /** Warn once less than this is left (s). */
  windowS: number;
  /** … or once less than this share of the whole validity is left, whichever comes later. */
  share: number;
}

/** 24 h, or the last quarter of a shorter validity (a certificate valid 8 h warns 2 h before). */
export const DEFAULT_CERTIFICATE_WARNING: CertificateWarningPolicy = { windowS: 86_400, share: 0.25 };

/** How long before validBefore the warning starts (ms): the smaller of the window and the share of the validity. */
export function warningLeadMs(certificate: Pick<SshCertificate, 'validAfter' | 'validBefore'>, policy: CertificateWarningPolicy): number {
  const window = policy.windowS * 1000;
  if (!certificate.validBefore || !certificate.validAfter) return window;
  const validity = certificate.validBefore.getTime() - certificate.validAfter.getTime();
  return Math.min(window, Math.max(0, validity * policy.share));
}

export function certificateStatus(
  certificate: Pick<SshCertificate, 'validAfter' | 'validBefore'>,
  now: Date,
  policy: CertificateWarningPolicy = DEFAULT_CERTIFICATE_WARNING,
): CertificateStatus {
  const t = now.getTime();
  if (certificate.validBefore && t >= certificate.validBefore.getTime()) return 'expired';
  if (certificate.validAfter && t < certificate.validAfter.getTime()) return 'not-yet-valid';
  if (certificate.validBefore && certificate.validBefore.getTime() - t <= warningLeadMs(certificate, policy)) return 'expiring';
  return 'valid';
}

/** True when the certificate can no longer authenticate at `now` (OpenSSH: valid_before is exclusive). */
export function certificateExpired(certificate: Pick<SshCertificate, 'validBefore'>, now: Date = new Date()): boolean {
  return certificate.validBefore !== null && now.getTime() >= certificate.validBefore.getTime();
}
