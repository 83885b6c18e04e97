// GET /v1/runs/{id}/logs redacts as it streams: whatever the chunking of the bytes and however
// small the segments, the text sent is what redactSecrets makes of the whole log (but for blank
// lines after a redacted YAML-like value, which the whole-text redaction takes into the value).
import fc from 'fast-check';
import { redactSecrets, StreamingRedactor } from '../src';

const KEY = [
  '-----BEGIN OPENSSH PRIVATE KEY-----',
  'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
  'QyNTUxOQAAACBrc2VjcmV0a2V5bWF0ZXJpYWxzaG91bGRuZXZlcmxlYWtvdXRzaWRlZXJn',
  'AAAAEBzZWNyZXRzZWNyZXRzZWNyZXRzZWNyZXRzZWNyZXRzZWNyZXRzZWNyZXRzZWNyZXQ=',
  '-----END OPENSSH PRIVATE KEY-----',
];
const GROUPS: string[][] = [
  ['step 12 loss=0.5 throughput=1234.5 samples/s'],
  ['password=hunter2-XYZ'],
  ['export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789'],
  ['token: erg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ['db:', '  password: |', '    s3cr3t-line-1', '    s3cr3t-line-2', 'done: 1'],
  KEY,
  [''],
  ['fetching https://user:pa55w0rd@example.com/x'],
  ['é à ü — 日本語 output'],
];
const SECRETS = ['hunter2', 'ghp_abc', 'erg_AAAA', 's3cr3t', 'pa55w0rd', 'a2tzZWNyZXRr', 'c2VjcmV0c2Vj', 'b3BlbnNzaC1y'];

function stream(text: string, chunkSizes: number[], segmentBytes: number): string {
  const bytes = Buffer.from(text);
  const redactor = new StreamingRedactor({ segmentBytes });
  const out: string[] = [];
  let offset = 0;
  for (let i = 0; offset < bytes.length; i++) {
    const size = chunkSizes.length > 0 ? chunkSizes[i % chunkSizes.length]! : bytes.length;
    out.push(...redactor.push(bytes.subarray(offset, offset + size)));
    offset += size;
  }
  out.push(...redactor.end());
  return out.join('');
}

describe('StreamingRedactor', () => {
  test('any chunking and any segment size give what redactSecrets gives for the whole log', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...GROUPS), { maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 8 }),
        fc.integer({ min: 1, max: 300 }),
        (groups, chunkSizes, segmentBytes) => {
          const text = groups.flat().join('\n') + '\n';
          const streamed = stream(text, chunkSizes, segmentBytes);
          const blankLinesAsOne = (t: string) => t.replace(/\n+/g, '\n').replace(/\n$/, '');
          expect(blankLinesAsOne(streamed)).toBe(blankLinesAsOne(redactSecrets(text)));
          for (const secret of SECRETS) expect(streamed).not.toContain(secret);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a key block longer than many segments never shows, and what follows it does', () => {
    const body = [...KEY.slice(0, 1), ...Array.from({ length: 200 }, () => KEY[1]!), ...KEY.slice(-1), 'after the key'].join('\n');
    const streamed = stream(`before\n${body}\n`, [7], 100);
    expect(streamed).toBe('before\n[redacted]\nafter the key\n');
  });

  test('a secret cut by a chunk boundary is still redacted', () => {
    const text = 'x\npassword=hunter2-XYZ\ny\n';
    for (let cut = 1; cut < text.length; cut++) {
      expect(stream(text, [cut, 1000], 1)).toBe('x\npassword=[redacted]\ny\n');
    }
  });
});
