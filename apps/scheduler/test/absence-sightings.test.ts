import { AbsenceSightings } from '../src/absence-sightings';

describe('AbsenceSightings', () => {
  it('confirms an absence only when a later reconcile, asked after the first was answered, finds it too', () => {
    const s = new AbsenceSightings();
    expect(s.confirm('c1', ['r1', 'r2'], 100, 110)).toEqual([]);
    // Asked before the first answer came back (overlapping reconciles): not a second sighting.
    expect(s.confirm('c1', ['r1', 'r2'], 105, 120)).toEqual([]);
    expect(s.confirm('c1', ['r1', 'r2'], 111, 130)).toEqual(['r1', 'r2']);
  });

  it('forgets a run once it is not absent any more, and keeps clusters apart', () => {
    const s = new AbsenceSightings();
    s.confirm('c1', ['r1', 'r2'], 100, 110);
    s.confirm('c2', ['r3'], 100, 110);
    // r1's job showed up (or it was settled): a later absence starts counting again.
    expect(s.confirm('c1', ['r2'], 200, 210)).toEqual(['r2']);
    expect(s.confirm('c1', ['r1'], 300, 310)).toEqual([]);
    expect(s.confirm('c2', ['r3'], 300, 310)).toEqual(['r3']);
  });
});
