import { sequentialText } from '../src/report/verdict-text';

describe('sequentialText: a sequential suite run in one line', () => {
  test('names the look, the runs used against the fixed design and why it stopped', () => {
    expect(sequentialText({ look: 1, maxRepetitions: 6, spending: 'obrien-fleming', runsUsed: 6, runsFixed: 12, stop: 'decided' })).toBe(
      "sequential (obrien-fleming, up to 6 repetitions): look 1, 6 of the fixed design's 12 runs (50 %); stopped: every configuration was decided before the maximum",
    );
    expect(sequentialText({ look: 2, maxRepetitions: 6, spending: 'pocock', runsUsed: 8, runsFixed: 12, stop: null })).toContain('look 2, 8 of the fixed design\'s 12 runs (67 %); still adding repetitions');
  });
});
