import { utils, type AnyAuthMethod, type AuthHandlerMiddleware, type Client, type ParsedKey } from 'ssh2';
// ssh2 1.17 (pinned in package.json) has no public way to send a packet; its protocol helper is
// what its own authPK uses.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { sendPacket, convertSignature } = require('ssh2/lib/protocol/utils.js') as {
  sendPacket(proto: unknown, packet: Buffer): void;
  convertSignature(signature: Buffer, keyType: string): Buffer | false;
};
import { CERTIFICATE_TYPES, type SshCertificate } from './certificate';

/**
 * Public key authentication with an OpenSSH user certificate over ssh2, which has none: its key
 * parser reads a `-cert-v01` line as the plain key under the certificate's name, and its authPK
 * writes one algorithm name where the protocol wants two. Per RFC 4252 §7 and PROTOCOL.certkeys,
 * the USERAUTH_REQUEST of a certificate names the certificate algorithm
 * (`ssh-ed25519-cert-v01@openssh.com`, `rsa-sha2-512-cert-v01@openssh.com`) and carries the
 * certificate blob as the public key, while the signature inside it is an ordinary one of the
 * certified key (`ssh-ed25519`, `rsa-sha2-512`), over the same data as for a plain key. OpenSSH
 * checks both names strictly.
 *
 * How: the certificate is offered as a "key" that ssh2 takes for a parsed private key (a child of
 * the real one, with the certificate's algorithm name and blob), and the connection's authPK is
 * wrapped (installCertificateAuth) so that for this key it writes the request itself; every
 * other key goes to ssh2's own authPK unchanged. Tested against OpenSSH's sshd with
 * TrustedUserCAKeys (packages/slurm/test/jump-cert.e2e.test.ts).
 */

const CERTIFIED = Symbol('erg.certificate');

interface CertifiedKey extends ParsedKey {
  [CERTIFIED]: { signatureAlgorithm: string; plainType: string };
}

/** The algorithm names and hash of each certificate type: RSA signs with SHA-512 (ssh-rsa's SHA-1 is off in OpenSSH ≥ 8.8). */
function algorithmsOf(type: keyof typeof CERTIFICATE_TYPES): { offered: string; signature: string; hash: string | undefined } {
  if (type === 'ssh-rsa-cert-v01@openssh.com') return { offered: 'rsa-sha2-512-cert-v01@openssh.com', signature: 'rsa-sha2-512', hash: 'sha512' };
  return { offered: type, signature: CERTIFICATE_TYPES[type], hash: undefined };
}

/**
 * The key ssh2 is handed for a certificate: the private key's parsed object (for signing) under
 * the certificate's algorithm name and blob. The certificate must certify this key
 * (certificateKeyProblem), which the API checks when the certificate is given.
 */
export function certifiedKey(privateKey: string | Buffer, certificate: SshCertificate): ParsedKey {
  const parsed = utils.parseKey(privateKey);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || key instanceof Error) throw new Error(`the private key does not parse: ${key instanceof Error ? key.message : 'no key'}`);
  const { offered, signature, hash } = algorithmsOf(certificate.type);
  const blob = certificate.blob;
  return Object.create(key, {
    type: { value: offered },
    getPublicSSH: { value: () => blob },
    // RSA: the hash of the signature algorithm above; the others have one hash of their own.
    sign: { value: (data: Buffer) => key.sign(data, hash) },
    [CERTIFIED]: { value: { signatureAlgorithm: signature, plainType: certificate.keyType } },
  }) as CertifiedKey;
}

function isCertified(key: unknown): key is CertifiedKey {
  return typeof key === 'object' && key !== null && CERTIFIED in key;
}

const sshString = (data: Buffer | string): Buffer => {
  const b = typeof data === 'string' ? Buffer.from(data) : data;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([len, b]);
};

const USERAUTH_REQUEST = 50;

/** What authPK needs of ssh2's Protocol object (1.17). */
interface ProtocolInternals {
  authPK(username: string, pubKey: unknown, keyAlgo?: unknown, cbSign?: unknown): void;
  _kex: { sessionID: Buffer };
  _authsQueue: string[];
  _packetRW: { write: { alloc(n: number): Buffer; allocStart: number; finalize(packet: Buffer): Buffer } };
}

/**
 * Makes the client send certifiedKey()s correctly. Call right after client.connect() (which
 * creates the protocol object) and before the handshake completes, i.e. in the same tick.
 */
export function installCertificateAuth(client: Client): void {
  const proto = (client as unknown as { _protocol?: ProtocolInternals })._protocol;
  if (!proto || typeof proto.authPK !== 'function' || !proto._packetRW?.write) {
    throw new Error('certificate authentication needs the internals of ssh2 1.17 (Protocol.authPK, _packetRW); the installed ssh2 differs');
  }
  const original = proto.authPK;
  proto.authPK = function (this: ProtocolInternals, username: string, pubKey: unknown, keyAlgo?: unknown, cbSign?: unknown) {
    if (!isCertified(pubKey)) {
      original.call(this, username, pubKey, keyAlgo, cbSign);
      return;
    }
    const sign = (typeof keyAlgo === 'function' ? keyAlgo : cbSign) as ((data: Buffer, done: (signature: Buffer) => void) => void) | undefined;
    const { signatureAlgorithm, plainType } = pubKey[CERTIFIED];
    const request = Buffer.concat([
      Buffer.from([USERAUTH_REQUEST]),
      sshString(username),
      sshString('ssh-connection'),
      sshString('publickey'),
      Buffer.from([sign ? 1 : 0]),
      sshString(pubKey.type),
      sshString(pubKey.getPublicSSH()),
    ]);
    const send = (payload: Buffer) => {
      const write = this._packetRW.write;
      const packet = write.alloc(payload.length);
      packet.set(payload, write.allocStart);
      this._authsQueue.push('publickey');
      sendPacket(this, write.finalize(packet));
    };
    if (!sign) {
      // The query: "would you take this key?" (answered by USERAUTH_PK_OK or FAILURE).
      send(request);
      return;
    }
    sign(Buffer.concat([sshString(this._kex.sessionID), request]), (raw) => {
      // Node signs ECDSA in DER; SSH wants (mpint r, mpint s). Ed25519 and RSA pass unchanged.
      const signature = convertSignature(raw, plainType);
      if (signature === false) throw new Error('could not convert the certificate key\'s signature');
      send(Buffer.concat([request, sshString(Buffer.concat([sshString(signatureAlgorithm), sshString(signature)]))]));
    });
  };
}

/** One way to authenticate at one hop: the certificate (when there is one) first, then the plain key, as OpenSSH's client does. */
export function publickeyAuthHandler(username: string, privateKey: string | Buffer, certificate: SshCertificate | null): AuthHandlerMiddleware {
  const attempts: AnyAuthMethod[] = [];
  if (certificate) attempts.push({ type: 'publickey', username, key: certifiedKey(privateKey, certificate) });
  attempts.push({ type: 'publickey', username, key: privateKey });
  // false: nothing left to try, ssh2 then fails with a client-authentication error.
  return (_methodsLeft, _partialSuccess, next) => next(attempts.shift() ?? (false as unknown as AnyAuthMethod));
}

