import { checkCampaignSize, EXPANSION_LIMIT } from '../src';

const grid = (params: number, values: number) =>
  Object.fromEntries(Array.from({ length: params }, (_, i) => [`p${i}`, Array.from({ length: values }, (_, j) => j)]));

describe('checkCampaignSize', () => {
  it('accepts a campaign at the limit', () => {
    expect(checkCampaignSize({ parameters: grid(2, 10), zip: [], exclude: [], repetitions: 5 }, { maxRuns: 500 })).toEqual([]);
  });

  it('refuses one run over the limit, with the counts and how to shrink it', () => {
    const issues = checkCampaignSize({ parameters: { sp: [1, 2, 4], mb: [1, 2] }, zip: [{ a: [1, 2], b: [3, 4] }], exclude: [], repetitions: 3 }, { maxRuns: 35 });
    expect(issues).toEqual([
      {
        path: '(root)',
        code: 'campaign_too_large',
        message:
          'the campaign has 36 runs (12 configurations × 3 repetitions), more than the limit of 35; remove parameter values (largest axes: sp: 3, mb: 2, zip(a, b): 2), add excludes or lower repetitions',
      },
    ]);
  });

  it('counts what excludes remove', () => {
    const spec = { parameters: { a: [1, 2], b: [1, 2] }, zip: [], exclude: [{ a: 1, b: 1 }], repetitions: 10 };
    expect(checkCampaignSize(spec, { maxRuns: 30 })).toEqual([]);
    expect(checkCampaignSize(spec, { maxRuns: 29 })[0]?.message).toMatch(/^the campaign has 30 runs \(3 configurations × 10 repetitions\)/);
  });

  it('refuses a 10^12-point space at once, without expanding it', () => {
    const started = Date.now();
    const issues = checkCampaignSize({ parameters: grid(12, 10), zip: [], exclude: [{ p0: 1 }], repetitions: 1 }, { maxRuns: 10_000 });
    expect(Date.now() - started).toBeLessThan(100);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.message).toBe(
      'the parameter space has 1,000,000,000,000 combinations before excludes, more than erg expands (1,000,000), and the limit is 10,000 runs; remove parameter values (largest axes: p0: 10, p1: 10, p2: 10), add excludes or lower repetitions',
    );
  });

  it('describes astronomically large spaces approximately', () => {
    const issues = checkCampaignSize({ parameters: grid(120, 1000), zip: [], exclude: [], repetitions: 1 }, { maxRuns: 10 });
    expect(issues[0]?.message).toMatch(/^the parameter space has about (Infinity|[0-9.]+e\+\d+) combinations/);
  });

  it('does not count excludes when the raw product is within the limit', () => {
    expect(checkCampaignSize({ parameters: grid(2, 10), zip: [], exclude: [{ p0: 1 }], repetitions: 1 }, { maxRuns: 100 })).toEqual([]);
  });

  it('counts rather than refuses between the run limit and the expansion limit', () => {
    const spec = { parameters: grid(6, 10), zip: [], exclude: [{ p0: [0, 1, 2, 3, 4, 5, 6, 7, 8] }], repetitions: 1 };
    expect(EXPANSION_LIMIT).toBe(1_000_000);
    expect(checkCampaignSize(spec, { maxRuns: 100_000 })).toEqual([]);
  });
});
