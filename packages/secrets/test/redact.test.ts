import { generateKeyPairSync } from 'node:crypto';
import pino from 'pino';
import { Writable } from 'node:stream';
import { LOG_REDACTION, redactSecrets } from '../src';

const API_TOKEN = 'erg_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0u_-';
const RUN_TOKEN = 'ergr_' + 'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8Nn7Mm6L';
const PEM = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const OPENSSH = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDx\n-----END OPENSSH PRIVATE KEY-----\n';

describe('redactSecrets', () => {
  it('removes erg API and run tokens wherever they appear', () => {
    const out = redactSecrets(`curl -H "Authorization: Bearer ${API_TOKEN}" x; echo ${RUN_TOKEN}.`);
    expect(out).not.toContain(API_TOKEN.slice(4, 20));
    expect(out).not.toContain(RUN_TOKEN.slice(5, 20));
    expect(out).toBe('curl -H "Authorization: Bearer [redacted]" x; echo [redacted].');
  });

  it('removes whole PEM and OpenSSH private key blocks and keeps the text around them', () => {
    const body = PEM.split('\n')[1]!;
    const out = redactSecrets(`before\n${PEM}middle\n${OPENSSH}after`);
    expect(out).toBe('before\n[redacted]\nmiddle\n[redacted]\nafter');
    expect(out).not.toContain(body);
  });

  it('removes key material cut at either edge of a log tail', () => {
    const lines = OPENSSH.split('\n');
    expect(redactSecrets(`start\n${lines.slice(0, 2).join('\n')}`)).toBe('start\n[redacted]');
    expect(redactSecrets(`${lines.slice(1).join('\n')}tail line`)).toBe('[redacted]\ntail line');
  });

  it('removes values of secret-looking names and keeps the names', () => {
    expect(redactSecrets('password=hunter2 user=bob')).toBe('password=[redacted] user=bob');
    expect(redactSecrets('export GITHUB_TOKEN=ghp_abcdef123; next')).toBe('export GITHUB_TOKEN=[redacted]; next');
    expect(redactSecrets('run --token=abc123 --db-password "p a s s"')).toBe('run --token=[redacted] --db-password "p a s s"');
    expect(redactSecrets('{"secret": "s3cr3t", "name": "x"}')).toBe('{"secret": "[redacted]", "name": "x"}');
    expect(redactSecrets("api_key: 'k-123'")).toBe("api_key: '[redacted]'");
    expect(redactSecrets('https://u.example/x?token=abc&page=2')).toBe('https://u.example/x?token=[redacted]&page=2');
  });

  it('removes passwords in URLs', () => {
    expect(redactSecrets('git clone https://bob:pa55@git.example/repo.git')).toBe('git clone https://bob:[redacted]@git.example/repo.git');
  });

  it('leaves ordinary job scripts as they are', () => {
    const script = [
      '#!/bin/bash',
      '#SBATCH --job-name=erg-5d0c9a7e-2f4b-4c1d-8e6a-1b3f5a7c9d21',
      "export ERG_RUN_ID='5d0c9a7e-2f4b-4c1d-8e6a-1b3f5a7c9d21'",
      "export ERG_TOKEN_FILE='/scratch/erg/run/erg.token'",
      "export ERG_PARAM_batch='64'",
      'bash ./run.sh > stdout.log 2> stderr.log',
    ].join('\n');
    expect(redactSecrets(script)).toBe(script);
  });
});

describe('LOG_REDACTION', () => {
  it('censors credentials in pino log lines', () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
    const log = pino({ redact: LOG_REDACTION }, sink);
    log.info({ req: { headers: { authorization: `Bearer ${API_TOKEN}`, cookie: 'sid=1' } }, cluster: { privateKey: PEM }, webhook: { secret: 'whsec' }, token: RUN_TOKEN, password: 'pw' }, 'x');
    const line = lines.join('');
    for (const secret of [API_TOKEN, PEM.split('\n')[1]!, 'whsec', RUN_TOKEN, 'sid=1', '"pw"']) expect(line).not.toContain(secret);
    expect(line).toContain('[redacted]');
  });
});
