import { publishableLine, runValidityText, validityRows, validityValueText } from '../src';

describe('validity as people read it', () => {
  it('words each gate in its unit', () => {
    expect(validityValueText('sample_share', 0.9867)).toBe('98.7 %');
    expect(validityValueText('longest_gap', 20.1)).toBe('20.1 s');
    expect(validityValueText('sampling_interval', 1.5)).toBe('1.50 ×');
    expect(validityValueText('clock_offset', 3012)).toBe('3.01 s');
    expect(validityValueText('counter_agreement', 0.1)).toBe('10.0 %');
    expect(validityValueText('idle_stability', 0.034)).toBe('CV 0.0340');
    expect(validityValueText('longest_gap', null)).toBe('—');
  });

  it("makes a run's gates rows: gate, status, worst, limit (≥ for the share kept), where — or why nothing was measured", () => {
    expect(validityRows([
      { check: 'sample_share', status: 'fail', value: 0.67, limit: 0.95, where: 'n1 cpu0.power', detail: '…' },
      { check: 'clock_spread', status: 'not_measured', value: null, limit: 1000, where: null, detail: 'one agent sent its clock: nothing to compare it with' },
    ])).toEqual([
      ['samples kept', 'fail', '67.0 %', '≥ 95.0 %', 'n1 cpu0.power'],
      ['clock spread', 'not measured', '—', '≤ 1.00 s', 'one agent sent its clock: nothing to compare it with'],
    ]);
  });

  it('says a run is valid, or invalid with its reasons, and nothing for figures computed before erg checked validity', () => {
    expect(runValidityText({ valid: true, reasons: [] })).toBe('valid: every validity gate passed or had nothing to judge');
    expect(runValidityText({ valid: false, reasons: ['a', 'b'], excluded: true })).toBe('invalid (left out of the results: validity.excludeInvalid): a; b');
    expect(runValidityText(undefined)).toBeNull();
  });

  it("says whether a campaign's results are publishable", () => {
    expect(publishableLine({ publishable: false, note: '2 of 8 runs invalid: longest gap 20.1 s > 3 s at n1 cpu0.power' })).toBe(
      'publishable: no — 2 of 8 runs invalid: longest gap 20.1 s > 3 s at n1 cpu0.power',
    );
    expect(publishableLine(undefined)).toBeNull();
  });
});
