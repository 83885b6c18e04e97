import { checkCampaignSize, measureCampaign } from '../src';

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

  it('refuses a 10^12-point space by counting it, without expanding it', () => {
    const issues = checkCampaignSize({ parameters: grid(12, 10), zip: [], exclude: [{ p0: 1 }], repetitions: 1 }, { maxRuns: 10_000 });
    expect(issues).toEqual([
      {
        path: '(root)',
        code: 'campaign_too_large',
        message:
          'the campaign has 900,000,000,000 runs (900,000,000,000 configurations × 1 repetitions), more than the limit of 10,000; remove parameter values (largest axes: p0: 10, p1: 10, p2: 10), add excludes or lower repetitions',
      },
    ]);
  });

  it('describes astronomically large spaces approximately', () => {
    expect(checkCampaignSize({ parameters: grid(40, 1000), zip: [], exclude: [], repetitions: 1 }, { maxRuns: 10 })[0]?.message).toMatch(
      /^the campaign has about 1\.0e\+120 runs/,
    );
    expect(checkCampaignSize({ parameters: grid(120, 1000), zip: [], exclude: [], repetitions: 1 }, { maxRuns: 10 })[0]?.message).toMatch(
      /^the campaign has more than 10\^308 runs/,
    );
  });

  it('accepts a space far beyond the run limit that excludes bring under it', () => {
    // 10^7 combinations, of which p0..p3 ≠ 0 are excluded: 1,000 configurations.
    const exclude = [0, 1, 2, 3].map((i) => ({ [`p${i}`]: [1, 2, 3, 4, 5, 6, 7, 8, 9] }));
    expect(measureCampaign({ parameters: grid(7, 10), zip: [], exclude, repetitions: 10 }, { maxRuns: 10_000 })).toEqual({ ok: true, configurations: 1000 });
  });

  it('refuses excludes too tangled to count within the step budget, naming the field', () => {
    const exclude = [0, 1, 2, 3, 4, 5].map((i) => ({ [`p${i}`]: [0, 1, 2, 3, 4], [`p${i + 1}`]: [5, 6, 7, 8, 9] }));
    expect(checkCampaignSize({ parameters: grid(8, 10), zip: [], exclude, repetitions: 1 }, { maxRuns: 10, maxCountSteps: 5 })).toEqual([
      { path: 'exclude', code: 'exclude_too_complex', message: expect.stringMatching(/within 5 steps; use fewer exclude entries/) },
    ]);
  });
});
