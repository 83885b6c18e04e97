// readStoredSpec: the stored campaign spec (campaigns.spec) read back typed, through the
// stored-spec migrations; one that no longer parses is ERG_STORED_SPEC_INVALID naming the campaign
// and every field at fault, never a default.
import { CampaignSpec, ERROR_CATALOG, ErgError } from '@erg/spec';
import { readStoredSpec, StoredSpecInvalidError, STORED_SPEC_MIGRATIONS, type StoredSpecMigration } from '../src/stored-spec';

const CAMPAIGN = '00000000-0000-4000-8000-00000000c0de';
/** A spec as the API stores it: validated, defaults applied, through JSON. */
const stored = JSON.parse(JSON.stringify(CampaignSpec.parse({
  name: 'stored', cluster: 'local', parameters: { cap: [300, 450] }, run: 'echo {{cap}}',
  power: { gpuPowerLimitW: '{{cap}}' }, metrics: [{ name: 'tokens', regex: 'tokens=(\\d+)', work: true }],
}))) as unknown;

describe('readStoredSpec', () => {
  test('a stored spec comes back as the typed spec it was stored as, power and metrics included', () => {
    const spec = readStoredSpec(CAMPAIGN, stored);
    expect(spec).toEqual(stored);
    expect(spec.power).toBeDefined();
    expect(spec.metrics.map((m) => m.name)).toEqual(['tokens']);
  });

  test('a stored spec that no longer parses is ERG_STORED_SPEC_INVALID naming the campaign and each field, not a default', () => {
    const bad = { ...(stored as Record<string, unknown>), repetitions: 0, resources: { nodes: 'two' } };
    let thrown: unknown;
    try {
      readStoredSpec(CAMPAIGN, bad);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(StoredSpecInvalidError);
    expect(thrown).toBeInstanceOf(ErgError);
    const err = thrown as StoredSpecInvalidError;
    expect(err.code).toBe('ERG_STORED_SPEC_INVALID');
    expect(err.status).toBe(500);
    expect(err.retryable).toBe(false);
    expect(err.campaignId).toBe(CAMPAIGN);
    expect(err.issues.map((i) => i.path).sort()).toEqual(['repetitions', 'resources.nodes']);
    expect(err.message).toContain(`campaign ${CAMPAIGN}`);
    expect(err.message).toMatch(/repetitions: .*resources\.nodes: |resources\.nodes: .*repetitions: /);
    expect(ERROR_CATALOG.ERG_STORED_SPEC_INVALID.status).toBe(500);
  });

  test('a spec stored before regexes were RE2 still reads: its lookahead stays, for the scheduler to name that one metric', () => {
    // A spec coming in is held to RE2 (parseCampaignSpec); the stored one is not, or its campaign could no longer be read.
    const metrics = [{ name: 'ms', regex: '([0-9]+)(?= ms)', reduce: 'last', source: 'stdout', work: false }];
    const phases = [{ name: 'p', step: '(?<t>\\d+)(?! skipped)' }];
    const spec = readStoredSpec(CAMPAIGN, { ...(stored as Record<string, unknown>), metrics, phases });
    expect(spec.metrics).toEqual(metrics);
    expect(spec.phases).toEqual(phases);
  });

  test('not a spec at all (null, a string, an empty object): the same error', () => {
    for (const raw of [null, 'spec', {}]) {
      expect(() => readStoredSpec(CAMPAIGN, raw)).toThrow(StoredSpecInvalidError);
    }
  });

  test('a message names at most ten fields, and says how many more', () => {
    const parameters = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`p${i}`, 'not a list']));
    try {
      readStoredSpec(CAMPAIGN, { ...(stored as Record<string, unknown>), parameters });
      throw new Error('expected it to throw');
    } catch (err) {
      expect(err).toBeInstanceOf(StoredSpecInvalidError);
      const e = err as StoredSpecInvalidError;
      expect(e.issues.length).toBeGreaterThan(10);
      expect(e.message).toContain(`(and ${e.issues.length - 10} more)`);
    }
  });

  test('migrations run in their order on the stored JSON before it is parsed', () => {
    const seen: string[] = [];
    const renamed: StoredSpecMigration = {
      name: 'test: runCommand → run',
      migrate: (raw) => {
        seen.push('renamed');
        const { runCommand, ...rest } = raw as Record<string, unknown>;
        return runCommand === undefined ? raw : { ...rest, run: runCommand };
      },
    };
    const repeated: StoredSpecMigration = {
      name: 'test: reps → repetitions',
      migrate: (raw) => {
        seen.push('repeated');
        const { reps, ...rest } = raw as Record<string, unknown>;
        return reps === undefined ? raw : { ...rest, repetitions: reps };
      },
    };
    const { run, repetitions, ...old } = stored as Record<string, unknown>;
    const spec = readStoredSpec(CAMPAIGN, { ...old, runCommand: run, reps: 3 }, [renamed, repeated]);
    expect(seen).toEqual(['renamed', 'repeated']);
    expect(spec).toEqual({ ...(stored as Record<string, unknown>), repetitions: 3 });
    expect(repetitions).toBe(1);
    // A migration leaves a spec already in the newer shape as it is.
    expect(readStoredSpec(CAMPAIGN, stored, [renamed, repeated])).toEqual(stored);
    // Without them the old shape does not parse: it is refused, naming the field.
    expect(() => readStoredSpec(CAMPAIGN, { ...old, runCommand: run, reps: 3 }, [])).toThrow(StoredSpecInvalidError);
  });

  test('the migrations of stored specs: named, each name once, and each leaves a current spec unchanged', () => {
    const names = STORED_SPEC_MIGRATIONS.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    for (const m of STORED_SPEC_MIGRATIONS) {
      expect(m.name.trim()).not.toBe('');
      expect(m.migrate(stored)).toEqual(stored);
    }
  });
});
