import { addValidityTallies, campaignValidity, tallyValidity, validityOfTally, type StoredFigures, type StoredValidity } from '../src';

const figures = (validity: StoredValidity | null | undefined): StoredFigures => ({
  timeS: 10, energyJ: 1000, edpJs: 10_000, ed2pJs2: 100_000, avgPowerW: 100, coverage: 1, ...(validity === undefined ? {} : { validity }),
});
const VALID: StoredValidity = { valid: true, excluded: false, reasons: [], failed: [] };
const gap = (excluded = false): StoredValidity => ({ valid: false, excluded, reasons: ['longest gap 20.1 s > 3 s at n1 cpu0.power'], failed: ['longest_gap'] });
const CLOCK: StoredValidity = {
  valid: false, excluded: false, reasons: ['longest gap 4 s > 3 s at n2 cpu0.power', "agent clock +3,012 ms from erg's server > 1,000 ms at n2 (9 pushes)"], failed: ['longest_gap', 'clock_offset'],
};

describe('campaignValidity: whether the results can be published as they are', () => {
  it('is publishable when every checked run passed its gates', () => {
    expect(campaignValidity([figures(VALID), figures(VALID), null])).toEqual({
      publishable: true, runs: 2, valid: 2, invalid: 0, unchecked: 1, excluded: 0, failures: {}, note: 'all 2 checked runs passed the validity gates',
    });
  });

  it('is not publishable while invalid runs count, and says which gates they failed', () => {
    const v = campaignValidity([...Array.from({ length: 6 }, () => figures(VALID)), figures(gap()), figures(CLOCK)]);
    expect(v).toMatchObject({ publishable: false, runs: 8, valid: 6, invalid: 2, excluded: 0, failures: { longest_gap: 2, clock_offset: 1 } });
    expect(v.note).toBe(
      "2 of 8 runs invalid: longest gap 20.1 s > 3 s at n1 cpu0.power (and 1 more); agent clock +3,012 ms from erg's server > 1,000 ms at n2 (9 pushes); " +
        'they count, flagged invalid: leave them out with validity.excludeInvalid or ?valid=only',
    );
  });

  it('is publishable when the invalid runs are left out, by the spec or by the reader, and counts them', () => {
    const bySpec = campaignValidity([figures(VALID), figures(gap(true))]);
    expect(bySpec).toMatchObject({ publishable: true, invalid: 1, excluded: 1 });
    expect(bySpec.note).toBe('1 of 2 runs invalid: longest gap 20.1 s > 3 s at n1 cpu0.power; left out of the figures (validity.excludeInvalid); 1 valid run counts');
    expect(campaignValidity([figures(VALID), figures(gap())], { validOnly: true })).toMatchObject({ publishable: true, invalid: 1, excluded: 1 });
  });

  it('is not publishable while figures computed before validity was checked count, nor with nothing checked', () => {
    const old = campaignValidity([figures(VALID), figures(undefined)]);
    expect(old).toMatchObject({ publishable: false, runs: 1, unchecked: 1 });
    expect(old.note).toMatch(/the figures of 1 run were computed before erg checked validity: they count unchecked/);
    expect(campaignValidity([])).toMatchObject({ publishable: false, runs: 0, note: 'no completed runs yet' });
    expect(campaignValidity([null])).toMatchObject({ publishable: false, unchecked: 1 });
  });

  it("is the same from the tallies of a campaign's parts, added in order, as from all of its runs at once", () => {
    // The results worker keeps each configuration's tally while its runs are unchanged and adds them.
    const runs = [figures(VALID), null, figures(CLOCK), figures(undefined), figures(gap()), figures(VALID), figures(gap(true)), figures(VALID)];
    for (const validOnly of [false, true]) {
      const whole = campaignValidity(runs, { validOnly });
      for (const cuts of [[0, 8], [0, 3, 8], [0, 1, 2, 3, 4, 5, 6, 7, 8], [0, 0, 5, 8]]) {
        const parts = cuts.slice(1).map((end, i) => tallyValidity(runs.slice(cuts[i], end), { validOnly }));
        const added = validityOfTally(addValidityTallies(parts), { validOnly });
        // The same value, and the same order of gates in failures and in the note's examples.
        expect(added).toEqual(whole);
        expect(Object.keys(added.failures)).toEqual(Object.keys(whole.failures));
      }
    }
    expect(validityOfTally(addValidityTallies([]))).toEqual(campaignValidity([]));
  });
});
