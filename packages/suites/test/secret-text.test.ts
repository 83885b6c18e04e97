import { parse } from 'yaml';
import { cutSecretFromYaml } from '@erg/suites';

const SECRET_TEXT = ['Kp7vQ2xW9mZ4rT8y', 'Lc3nB6hJ1sD5fG0a'];
const read = (text: string) => parse(text, { version: '1.2', schema: 'core' });

describe('cutSecretFromYaml', () => {
  test.each([
    ['folded', `webhook:\n  secret: >-\n    ${SECRET_TEXT[0]}\n    ${SECRET_TEXT[1]}\nname: x\n`],
    ['literal', `webhook:\n  secret: |\n    ${SECRET_TEXT[0]}\n\n    ${SECRET_TEXT[1]}\n\nname: x\n`],
    ['multi-line plain', `webhook:\n  secret: ${SECRET_TEXT[0]}\n    ${SECRET_TEXT[1]}\nname: x\n`],
    ['double-quoted over lines', `webhook: { secret: "${SECRET_TEXT[0]}\n    ${SECRET_TEXT[1]}" }\nname: x\n`],
    ['escapes', `webhook:\n  secret: "${SECRET_TEXT[0]}\\x41${SECRET_TEXT[1]}"\nname: x\n`],
    ['tagged, commented', `webhook:\n  secret: !!str ${SECRET_TEXT[0]}${SECRET_TEXT[1]} # the CI's\nname: x\n`],
  ])('%s: the value is gone, the document still reads, everything else as written', (_form, text) => {
    const secret = read(text).webhook.secret as string;
    const out = cutSecretFromYaml(text, secret);
    for (const part of SECRET_TEXT) expect(out).not.toContain(part);
    expect(read(out)).toEqual({ ...read(text), webhook: { secret: '[redacted]' } });
    expect(out.endsWith('name: x\n')).toBe(true);
  });

  test('an anchor the secret aliases is cut where it is written', () => {
    const text = `campaign:\n  description: &s >-\n    ${SECRET_TEXT[0]}\n    ${SECRET_TEXT[1]}\nwebhook:\n  secret: *s\n`;
    const out = cutSecretFromYaml(text, read(text).webhook.secret);
    for (const part of SECRET_TEXT) expect(out).not.toContain(part);
    expect(read(out)).toEqual({ campaign: { description: '[redacted]' }, webhook: { secret: '[redacted]' } });
  });

  test('text without the secret comes back unchanged', () => {
    const text = 'name: x # comment\nwebhook: { url: "https://ci.example/hook" }\n';
    expect(cutSecretFromYaml(text, 'not-in-there-0123456789')).toBe(text);
  });
});
