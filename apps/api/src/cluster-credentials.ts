import type { ClusterRecord, NewJumpHost, OpenedClusterCredentials } from '@erg/db';
import {
  certificateKeyProblem,
  certificateStatus,
  checkPrivateKey,
  DEFAULT_CERTIFICATE_WARNING,
  parseCertificate,
  type CertificateWarningPolicy,
  type SshCertificate,
} from '@erg/slurm';
import { jumpHostIssues, type CertificateView, type JumpHostCreate, type SpecIssue } from '@erg/spec';
import type { ApiConfig } from './config';

/**
 * What the API checks of the credentials a cluster logs in with (the schema cannot: it needs the
 * SSH code), and how it shows their certificates. Glossary:
 * - hop: one SSH login on the way to the login node — each jump host, then the login node itself.
 * - warning window: how long before a certificate's end the cluster view and /metrics warn
 *   (ERG_CERTIFICATE_WARNING_S, or ERG_CERTIFICATE_WARNING_SHARE of its validity, the shorter).
 */

export function certificateWarningPolicy(config: Pick<ApiConfig, 'ERG_CERTIFICATE_WARNING_S' | 'ERG_CERTIFICATE_WARNING_SHARE'>): CertificateWarningPolicy {
  return { windowS: config.ERG_CERTIFICATE_WARNING_S, share: config.ERG_CERTIFICATE_WARNING_SHARE };
}

/** A stored certificate as the API shows it; null for none or (never stored: the API checks on the way in) one that does not parse. */
export function certificateView(text: string | null, policy: CertificateWarningPolicy = DEFAULT_CERTIFICATE_WARNING, now = new Date()): CertificateView | null {
  if (!text) return null;
  const parsed = parseCertificate(text);
  if (!parsed.ok) return null;
  const c = parsed.certificate;
  return {
    type: c.type,
    keyId: c.keyId,
    serial: c.serial,
    principals: c.principals,
    validAfter: c.validAfter?.toISOString() ?? null,
    validBefore: c.validBefore?.toISOString() ?? null,
    status: certificateStatus(c, now, policy),
    expiresInS: c.validBefore ? Math.round((c.validBefore.getTime() - now.getTime()) / 1000) : null,
    publicKeySha256: c.publicKeySha256,
    signingKeySha256: c.signingKeySha256,
  };
}

/** "3 h 20 min", "2 days", "45 s": how long until (or since) a moment, for warnings. */
export function spanText(seconds: number): string {
  const s = Math.abs(Math.round(seconds));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.floor(s / 3600)} h${s % 3600 >= 60 ? ` ${Math.round((s % 3600) / 60)} min` : ''}`;
  return `${Math.round(s / 86_400)} days`;
}

/** The cluster view's warnings: each certificate (the login node's, each jump host's own) in its warning window or expired. */
export function credentialWarnings(
  cluster: { name: string; certificate: CertificateView | null; jumpHosts: { host: string; port: number; ownKey: boolean; certificate: CertificateView | null }[] },
): string[] {
  const out: string[] = [];
  const say = (whose: string, c: CertificateView | null, rotate: string) => {
    if (!c || c.validBefore === null || c.expiresInS === null) return;
    if (c.status === 'expired') out.push(`${whose} expired ${spanText(c.expiresInS)} ago (${c.validBefore}): erg does not connect and runs wait; rotate it: ${rotate}`);
    else if (c.status === 'expiring') out.push(`${whose} expires in ${spanText(c.expiresInS)} (${c.validBefore}); rotate it: ${rotate}`);
  };
  say("the cluster's certificate", cluster.certificate, `erg clusters credentials ${cluster.name} --cert FILE`);
  for (const [i, j] of cluster.jumpHosts.entries()) {
    // A jump host without a key of its own uses the cluster's certificate: said once, above.
    if (j.ownKey) say(`the certificate of jump host ${i + 1} (${j.host}:${j.port})`, j.certificate, `erg clusters credentials ${cluster.name} --jump … (every jump host, jump host ${i + 1} with cert=FILE)`);
  }
  return out;
}

/** The credentials part of the cluster view. */
export function credentialsView(c: ClusterRecord, policy: CertificateWarningPolicy = DEFAULT_CERTIFICATE_WARNING, now = new Date()) {
  const certificate = certificateView(c.certificate, policy, now);
  const jumpHosts = c.jumpHosts.map((j) => ({
    host: j.host,
    port: j.port,
    user: j.user,
    hostKeySha256: j.hostKeySha256,
    ownKey: j.privateKey !== null,
    certificate: j.privateKey === null ? certificate : certificateView(j.certificate, policy, now),
  }));
  return {
    certificate,
    jumpHosts,
    credentialsVersion: c.credentialsVersion,
    credentialsUpdatedAt: c.credentialsUpdatedAt?.toISOString() ?? null,
    warnings: credentialWarnings({ name: c.name, certificate, jumpHosts }),
  };
}

/**
 * Why `certificate` (the text of a body field at `path`) cannot log in with `privateKey`, as
 * issues: it does not parse, is not a user certificate of that key, or has expired (a
 * certificate not yet valid is accepted: it will be).
 */
function certificateIssues(certificate: string, privateKey: string, path: string, keyPath: string, now: Date): SpecIssue[] {
  const parsed = parseCertificate(certificate);
  if (!parsed.ok) return [{ path, code: 'invalid_certificate', message: parsed.message }];
  const problem = certificateKeyProblem(parsed.certificate, privateKey);
  if (problem) return [{ path, code: 'certificate_mismatch', message: `does not go with ${keyPath}: ${problem}` }];
  return expiredIssue(parsed.certificate, path, now);
}

function expiredIssue(c: SshCertificate, path: string, now: Date): SpecIssue[] {
  if (c.validBefore && now >= c.validBefore) {
    return [{ path, code: 'certificate_expired', message: `expired at ${c.validBefore.toISOString()}: have the site's CA sign the key again (ssh-keygen -s CA -I ID -n USER -V +8h erg_key.pub)` }];
  }
  return [];
}

function keyIssues(text: string, path: string): { key: string | null; issues: SpecIssue[] } {
  const key = checkPrivateKey(text);
  if (key.ok) return { key: key.key, issues: [] };
  return { key: null, issues: [{ path, code: key.problem === 'encrypted' ? 'encrypted_key' : 'invalid_key', message: key.message }] };
}

/** Jump hosts checked, with their keys as they are to be stored (PKCS#8 rewritten). */
export function checkedJumpHosts(jumpHosts: readonly JumpHostCreate[], at: string, now = new Date()): { jumpHosts: NewJumpHost[]; issues: SpecIssue[] } {
  const issues: SpecIssue[] = [...jumpHostIssues(jumpHosts, at)];
  const out: NewJumpHost[] = jumpHosts.map((j, i) => {
    const base = { host: j.host, port: j.port, user: j.user, hostKeySha256: j.hostKeySha256 };
    if (j.privateKey === undefined) return base;
    const key = keyIssues(j.privateKey, `${at}[${i}].privateKey`);
    issues.push(...key.issues);
    if (key.key !== null && j.certificate !== undefined) issues.push(...certificateIssues(j.certificate, key.key, `${at}[${i}].certificate`, `${at}[${i}].privateKey`, now));
    return { ...base, privateKey: key.key ?? j.privateKey, ...(j.certificate === undefined ? {} : { certificate: j.certificate }) };
  });
  return { jumpHosts: out, issues };
}

/**
 * The credentials of a whole cluster body (POST/PUT /v1/clusters): the key, its certificate and
 * the jump hosts. Returns them as they are to be stored, and every issue found.
 */
export function checkedCredentials(body: { privateKey: string; certificate?: string | undefined; jumpHosts: readonly JumpHostCreate[] }, now = new Date()) {
  const key = keyIssues(body.privateKey, 'privateKey');
  const issues = [...key.issues];
  if (key.key !== null && body.certificate !== undefined) issues.push(...certificateIssues(body.certificate, key.key, 'certificate', 'privateKey', now));
  const jumps = checkedJumpHosts(body.jumpHosts, 'jumpHosts', now);
  issues.push(...jumps.issues);
  return { privateKey: key.key ?? body.privateKey, certificate: body.certificate ?? null, jumpHosts: jumps.jumpHosts, issues };
}

/**
 * A rotation (PUT /v1/clusters/{name}/credentials) checked against what is stored: the
 * certificate that will be used (given, or kept) must certify the key that will be used (given,
 * or kept). `stored` is the cluster's credentials opened.
 */
export function checkedRotation(
  body: { privateKey?: string | undefined; certificate?: string | null | undefined; jumpHosts?: readonly JumpHostCreate[] | undefined },
  stored: Pick<OpenedClusterCredentials, 'privateKey' | 'certificate'>,
  now = new Date(),
) {
  const issues: SpecIssue[] = [];
  if (body.privateKey === undefined && body.certificate === undefined && body.jumpHosts === undefined) {
    issues.push({ path: '(root)', code: 'required', message: 'give at least one of privateKey, certificate and jumpHosts: what is left out is kept' });
  }
  let privateKey: string | undefined;
  if (body.privateKey !== undefined) {
    const key = keyIssues(body.privateKey, 'privateKey');
    issues.push(...key.issues);
    privateKey = key.key ?? undefined;
  }
  const keyInUse = privateKey ?? (body.privateKey === undefined ? stored.privateKey : null);
  const certificateInUse = body.certificate === undefined ? stored.certificate : body.certificate;
  if (keyInUse !== null && certificateInUse !== null) {
    if (body.certificate === undefined) {
      // The kept certificate must still go with a new key.
      const kept = certificateIssues(certificateInUse, keyInUse, 'certificate', 'privateKey', now).filter((i) => i.code === 'certificate_mismatch');
      issues.push(...kept.map((i) => ({ ...i, message: `the stored certificate ${i.message.replace(/^does not go with privateKey: /, 'does not certify the new privateKey: ')}; send the new key's certificate with it, or certificate: null` })));
    } else {
      issues.push(...certificateIssues(certificateInUse, keyInUse, 'certificate', body.privateKey === undefined ? 'the stored privateKey' : 'privateKey', now));
    }
  }
  const jumps = body.jumpHosts === undefined ? null : checkedJumpHosts(body.jumpHosts, 'jumpHosts', now);
  if (jumps) issues.push(...jumps.issues);
  return {
    change: {
      ...(privateKey === undefined ? {} : { privateKey }),
      ...(body.certificate === undefined ? {} : { certificate: body.certificate }),
      ...(jumps ? { jumpHosts: jumps.jumpHosts } : {}),
    },
    issues,
  };
}
