// The study's answer under `erg results` (and so at the end of `erg submit --watch`): the claims'
// fastest and most frugal, whether they are told apart, the phase and the link kind that differ most.
import { colors, resultsMarkdown, resultsTable, studyAnswer, studyAnswerLines } from '@erg/cli';
import { campaignPhasesFixture } from './fixtures/phases';
import { dataMovementFixture } from './fixtures/data-movement';
import { resultsFixture } from './fixtures/results';

const plain = colors(false);
const withBoth = () => ({ ...resultsFixture(), phases: campaignPhasesFixture(), dataMovement: dataMovementFixture() });

test("the fastest and the most frugal are the claims' bests, told apart as the trade-off claim says", () => {
  const results = withBoth();
  const a = studyAnswer(results)!;
  expect(a.fastest).toBe('mode=a,b;n=1');
  expect(a.mostFrugal).toBe('mode=z;n=3');
  expect(a.distinguishable).toBe(results.claims!.tradeoff!.distinguishable);
  expect(a.statement).toBe(results.claims!.tradeoff!.statement);
  expect(a.level).toMatch(/^95 %, Holm over \d+ comparisons/);
});

test('the phase is the marked one whose self energy differs most (not the enclosing one, not the unmarked time), with its share of the difference', () => {
  const a = studyAnswer(withBoth())!;
  // forward 8000 − 3500 = 4500 J, backward 4000, io 1500, (unmarked) 800, train (encloses them; self) 200.
  expect(a.phase).toEqual({ name: 'forward', fastest: 8_000, mostFrugal: 3_500 });
  expect(a.energyDifferenceJ).toBe(11_000);
  const phaseLine = studyAnswerLines(a).lines.find((l) => l.startsWith('Phase: '))!;
  expect(phaseLine).toBe('Phase: forward differs most — +4.50 kJ self energy per run in the fastest (40.9 % of the +11.0 kJ between them): 8.00 kJ against 3.50 kJ (erg results --by-phase).');
});

test('the data movement is the link kind whose bytes per run differ most, a kind one side did not move counting 0', () => {
  const a = studyAnswer(withBoth())!;
  // pcie 400 GB vs 20 GB (+380 GB); c2c 2000 GB vs none (+2000 GB).
  expect(a.movement).toEqual({ name: 'c2c', fastest: 2000e9, mostFrugal: 0 });
  const line = studyAnswerLines(a).lines.find((l) => l.startsWith('Data movement: '))!;
  expect(line).toMatch(/^Data movement: NVLink-C2C differs most — \+2\.00 TB per run in the fastest: 2\.00 TB against 0 B \(erg results --data-movement\)\.$/);
});

test('a phase the frugal one spends more in wins by size, and reads as a negative difference', () => {
  const phases = campaignPhasesFixture();
  const frugal = phases.configurations.find((c) => c.key === 'mode=z;n=3')!;
  frugal.phases.find((p) => p.name === 'io')!.selfEnergyJ.mean = 20_000;
  const a = studyAnswer({ ...withBoth(), phases })!;
  expect(a.phase).toEqual({ name: 'io', fastest: 3_000, mostFrugal: 20_000 });
  expect(studyAnswerLines(a).lines.find((l) => l.startsWith('Phase: '))).toMatch(/^Phase: io differs most — −17\.0 kJ self energy per run in the fastest/);
});

test('without phases or data movement the answer says what is not known; without claims there is no answer', () => {
  const a = studyAnswer(resultsFixture())!;
  expect(a.phase).toBeNull();
  expect(a.movement).toBeNull();
  const { lines } = studyAnswerLines(a);
  expect(lines).toContain("Phase: not known — the two configurations' runs marked no phases (erg-mark or `import erg` marks them: erg phases --help).");
  expect(lines).toContain("Data movement: not known — no data-movement sensor measured both configurations' runs.");
  expect(studyAnswer({ ...resultsFixture(), claims: null })).toBeNull();
});

test('one configuration both fastest and most frugal: no trade-off, nothing to explain', () => {
  const results = withBoth();
  const claims = results.claims!;
  const time = claims.ranks.find((r) => r.objective === 'time')!;
  const ranks = claims.ranks.map((r) => (r.objective === 'energy' ? { ...r, best: time.best } : r));
  const a = studyAnswer({ ...results, claims: { ...claims, ranks, tradeoff: null } })!;
  expect(a.distinguishable).toBeNull();
  expect(a.phase).toBeNull();
  expect(a.movement).toBeNull();
  expect(studyAnswerLines(a).lines).toEqual([
    `Fastest: ${a.fastestText}`,
    `Most frugal: ${a.mostFrugalText}`,
    'Distinguishable: — the fastest configuration is also the most frugal: there is no trade-off to make.',
  ]);
});

test("erg results' table and Markdown end with the answer", () => {
  const table = resultsTable(withBoth(), plain).trimEnd().split('\n');
  const at = table.findIndex((l) => l.startsWith("The study's answer (95 %"));
  expect(at).toBeGreaterThan(0);
  expect(table.slice(at + 1).map((l) => l.trim().split(':')[0])).toEqual(['Fastest', 'Most frugal', 'Distinguishable', 'Phase', 'Data movement']);
  const md = resultsMarkdown(withBoth());
  expect(md).toMatch(/\*\*The study's answer \(95 %[^*]*\):\*\*\n\n- Fastest: mode=a,b;n=1/);
  expect(md.trimEnd().split('\n').at(-1)).toMatch(/^- Data movement: NVLink-C2C differs most/);
});
