// A batch's phase marks: carried through decodeTelemetryValue into the normalized batch as sent,
// and every bad one a 400-style issue naming its field (`marks[3].name`), the batch refused whole.
import { decodeTelemetryBatch, decodeTelemetryValue, MAX_BATCH_MARKS, type BatchMark, type TelemetryBatchShape } from '../src';

const now = Date.UTC(2026, 11, 4, 12);
const bounds = { minT: now - 3_600_000, maxT: now + 3_600_000 };
const mark = (offset: number, extra: Partial<Record<keyof BatchMark, unknown>> = {}) => ({ offset, kind: 'begin', name: 'train', t: now + offset, clock: 'mono', writer: 'py', ...extra });
const batch = (marks: unknown[]) => ({ node: 'n1', seq: 3, samples: [{ sensor: 'gpu0.power', t: [now], v: [300] }], marks });

describe('a batch with marks', () => {
  it('carries them through, as sent', () => {
    const marks: BatchMark[] = [
      { offset: 0, kind: 'begin', name: 'train', t: now + 1.5, clock: 'mono', writer: 'py' },
      { offset: 31, kind: 'step', name: 'step', t: now + 2, clock: 'wall', writer: 'sh' },
      { offset: 58, kind: 'end', name: 'epoch:1/warm-up.2', t: now + 3, clock: 'mono', writer: 'py' },
    ];
    const sent: TelemetryBatchShape = { node: 'n1', seq: 3, samples: [{ sensor: 'gpu0.power', t: [now], v: [300] }], marks };
    const result = decodeTelemetryBatch(JSON.stringify(sent), bounds);
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    expect(result.batch.marks).toEqual(marks);
  });

  it('without marks (or with none) has no `marks`', () => {
    const without = decodeTelemetryValue({ node: 'n1', seq: 3, samples: [{ sensor: 'gpu0.power', t: [now], v: [300] }] }, bounds);
    const empty = decodeTelemetryValue(batch([]), bounds);
    expect(without.ok && 'marks' in without.batch).toBe(false);
    expect(empty.ok && 'marks' in empty.batch).toBe(false);
  });

  it(`takes ${MAX_BATCH_MARKS} marks`, () => {
    const result = decodeTelemetryValue(batch(Array.from({ length: MAX_BATCH_MARKS }, (_, i) => mark(i * 40))), bounds);
    expect(result.ok && result.batch.marks?.length).toBe(MAX_BATCH_MARKS);
  });
});

describe('a batch with a bad mark is refused whole, the mark named', () => {
  const refused = (bad: Record<string, unknown>, at = 3) => {
    const marks = [mark(0), mark(10), mark(20), { ...mark(30), ...bad }];
    const result = decodeTelemetryValue(batch(marks.slice(0, at).concat(marks.slice(3))), bounds);
    if (result.ok) throw new Error('accepted');
    return result.issues;
  };

  it.each([
    ['name', { name: 'has space' }, /phase name: 1-64 letters, digits and _ \. : \/ -/],
    ['name', { name: 'x'.repeat(65) }, /phase name/],
    ['name', { name: '' }, /phase name/],
    ['kind', { kind: 'start' }, /begin|end|step/],
    ['clock', { clock: 'tai' }, /mono|wall/],
    ['writer', { writer: 'Python' }, /who wrote the mark/],
    ['offset', { offset: -1 }, /0/],
    ['offset', { offset: 1.5 }, /whole|integer/],
    ['t', { t: 'soon' }, /number/],
  ])('%s: %j', (field, bad, message) => {
    const issues = refused(bad);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe(`marks[3].${field}`);
    expect(issues[0]!.message).toMatch(message);
  });

  it('a mark outside the run\'s time window (the same window as the samples)', () => {
    const issues = refused({ t: bounds.maxT + 1 });
    expect(issues).toEqual([{ path: 'marks[3].t', code: 'time_out_of_range', message: expect.stringMatching(/^mark time .* lies outside this run/) }]);
    expect(refused({ t: bounds.minT - 1 })[0]!.path).toBe('marks[3].t');
  });

  it('a mark with a field erg does not know, or without one it needs', () => {
    expect(refused({ phase: 'x' })[0]!.path).toBe('marks[3].phase');
    const { writer: _writer, ...noWriter } = mark(30);
    const result = decodeTelemetryValue(batch([noWriter]), bounds);
    expect(result.ok ? [] : result.issues.map((i) => i.path)).toEqual(['marks[0].writer']);
  });

  it(`more than ${MAX_BATCH_MARKS} marks, by their number, before any is validated`, () => {
    const marks = Array.from({ length: MAX_BATCH_MARKS + 1 }, () => ({ nonsense: true }));
    expect(decodeTelemetryValue(batch(marks), bounds)).toEqual({
      ok: false,
      issues: [{ path: 'marks', code: 'too_big', message: `${MAX_BATCH_MARKS + 1} marks in one batch; at most ${MAX_BATCH_MARKS} (send the rest with the next batches)` }],
    });
  });

  it('marks that are not a list', () => {
    const result = decodeTelemetryValue({ ...batch([]), marks: { offset: 0 } }, bounds);
    expect(result.ok ? [] : result.issues.map((i) => i.path)).toEqual(['marks']);
  });
});
