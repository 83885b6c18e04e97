import path from 'node:path';
import { z } from 'zod';
import { DATABASE, parseEnv, QUEUE, SECRET_KEY } from '../src';

describe('parseEnv', () => {
  const schema = z.object({ ...DATABASE, ...QUEUE, ...SECRET_KEY });

  it('fills the shared defaults, and an empty variable counts as unset', () => {
    const c = parseEnv(schema, { ERG_SECRET_KEY: '' }, 'test');
    expect(c.DATABASE_URL).toBe('postgresql://postgres@127.0.0.1:5432/erg');
    expect(c.REDIS_URL).toBe('redis://127.0.0.1:6379');
    expect(c.ERG_QUEUE_PREFIX).toBe('erg');
    expect(c.ERG_SECRET_KEY).toBeUndefined();
    // The development key at the repository root, wherever the package is built.
    expect(c.ERG_SECRET_KEY_FILE).toBe(path.resolve(__dirname, '..', '..', '..', '.erg', 'secret.key'));
  });

  it('names every variable at fault and the app in one message', () => {
    expect(() => parseEnv(schema, { ERG_QUEUE_PREFIX: 'a b', ERG_SECRET_KEY_FILE: '' }, 'test')).toThrow(
      /^invalid test configuration:\n {2}ERG_QUEUE_PREFIX: .*\n {2}ERG_SECRET_KEY_FILE: /,
    );
  });
});
