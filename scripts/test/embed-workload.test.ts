// examples/multimodal-cpu.yaml stages the reference workload through `files:` (scripts/embed-workload.js):
// the copy a campaign runs must be the script the repository tests (apps/scheduler/test/examples-multimodal.test.ts).
import { readFileSync } from 'node:fs';
import { CampaignSpec, decodeCampaignText } from '@erg/spec';

const { embedded, EXAMPLE, SCRIPT } = require('../embed-workload.js') as { embedded: (example?: string, script?: string) => string; EXAMPLE: string; SCRIPT: string };

test("the example carries the current script, byte for byte, as its spec's files entry", () => {
  const text = readFileSync(EXAMPLE, 'utf8');
  expect(embedded()).toBe(text); // else: node scripts/embed-workload.js
  const decoded = decodeCampaignText(text, 'yaml');
  if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
  const spec = CampaignSpec.parse(decoded.raw);
  expect(spec.files['train_multimodal.py']).toBe(readFileSync(SCRIPT, 'utf8'));
  // Nothing of erg is needed on the cluster: the run starts the staged copy, not a checkout's.
  expect(spec.workloadDir).toBeUndefined();
  expect(spec.run).toMatch(/\/usr\/bin\/python3 train_multimodal\.py /);
});

test('a script that a files: template would misread is refused, and an example without the opener line is named', () => {
  expect(() => embedded('files:\n  train_multimodal.py: |\n', 'x = "{{a}}"\n')).toThrow(/contains "\{\{"/);
  expect(() => embedded('files: {}\n', 'print(1)\n')).toThrow(/has no line/);
  expect(embedded('files:\n  train_multimodal.py: |\n', 'a\n\n  b\n')).toBe('files:\n  train_multimodal.py: |\n    a\n\n      b\n');
});
