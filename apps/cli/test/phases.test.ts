import { colors, phasesReport, stripAnsi } from '@erg/cli';
import { RunPhasesView } from '@erg/spec';
import { runPhasesFixture } from './fixtures/phases';
import { ANSI, erg, routes, RUN_ID } from './helpers';

const plain = colors(false);
const PATH = `/v1/runs/${RUN_ID}/phases`;
const answering = (answer: { status: number; body?: unknown }) => routes({ [`GET ${PATH}`]: answer });
const noMarks = () => runPhasesFixture({ phases: null, marks: { count: 0, nodes: [], writers: [] }, segments: [] });

test("the fixture is a body the API's schema accepts", () => {
  expect(RunPhasesView.parse(runPhasesFixture())).toEqual(runPhasesFixture());
  expect(RunPhasesView.parse(noMarks())).toEqual(noMarks());
});

describe('the phases report', () => {
  const report = phasesReport({ view: runPhasesFixture() }, plain);
  const lines = report.split('\n');

  test('a header line: run, window, energy, method, the sensors’ resolution, the marks and who wrote them where', () => {
    expect(lines[0]).toBe(`Run ${RUN_ID} · window 1 min 02 s · 73.8 kJ · attributed by regression · sensors' resolution 100 ms · 4,256 marks by py, sh on nid001, nid002`);
  });

  test('one row per phase in the API order (largest inclusive energy first), the unmarked time last', () => {
    expect(lines.slice(2, 9)).toEqual([
      'phase       occurrences        time  self energy   energy   ± 95 %  mean power   share',
      'epoch                 6  1 min 40 s      1.50 kJ  64.0 kJ  ± 850 J       640 W  86.7 %',
      'backward            600      48.0 s      31.2 kJ  31.2 kJ  ± 510 J       650 W  42.3 %',
      'forward             600      40.0 s      28.0 kJ  28.0 kJ  ± 420 J       700 W  37.9 %',
      'eval                  2      10.0 s      4.40 kJ  4.40 kJ  ± 120 J       440 W   6.0 %',
      'optimizer           600      8.00 s      3.30 kJ  3.30 kJ  ± 260 J       413 W   4.5 %',
      '(unmarked)            —      13.0 s      5.40 kJ  5.40 kJ  ± 190 J       415 W   7.3 %',
    ]);
    expect(report).toContain("the self energies and (unmarked) add up to the run's 73.8 kJ");
  });

  test('the steps: count, J/step ± std, p50, p95, time per step, and how many were below the sensors’ resolution', () => {
    expect(report).toContain(
      [
        'Steps',
        '  step        count  J/step     ± std    p50    p95  time/step  below resolution',
        '  eval_batch     40   210 J  ± 6.30 J  210 J  222 J     482 ms           0 of 38',
        '  step          600   106 J  ± 4.10 J  106 J  113 J     160 ms         12 of 598',
      ].join('\n'),
    );
  });

  test('the warnings last', () => {
    expect(report.endsWith(`\nWarnings (1):\n  ${runPhasesFixture().phases!.warnings[0]}\n`)).toBe(true);
  });

  test('proportional attribution: no interval (—); unknown resolution; no steps; many nodes counted, not all named', () => {
    const view = runPhasesFixture();
    const p = view.phases!;
    p.method = 'proportional';
    p.resolutionMs = null;
    p.steps = [];
    p.warnings = [];
    for (const ph of p.phases) Object.assign(ph, { ci95J: null, selfCi95J: null, method: 'proportional' });
    Object.assign(p.unmarked, { ci95J: null, method: 'proportional' });
    view.marks.nodes = Array.from({ length: 12 }, (_, i) => `nid${String(i + 1).padStart(3, '0')}`);
    expect(RunPhasesView.safeParse(view).success).toBe(true);
    const text = phasesReport({ view }, plain);
    expect(text.split('\n')[0]).toBe(
      `Run ${RUN_ID} · window 1 min 02 s · 73.8 kJ · attributed proportionally · sensors' resolution unknown (no readings) · 4,256 marks by py, sh on nid001, nid002, nid003, nid004, … (12 in all)`,
    );
    expect(text).toMatch(/^epoch\s+6\s+1 min 40 s\s+1\.50 kJ\s+64\.0 kJ\s+—\s+640 W\s+86\.7 %$/m);
    expect(text).toMatch(/^\(unmarked\)\s+—\s+13\.0 s\s+5\.40 kJ\s+5\.40 kJ\s+—\s+415 W\s+7\.3 %$/m);
    expect(text).toContain('Steps: none marked');
    expect(text).not.toContain('Warnings');
  });

  test('colour only when asked; the text is the same without it', () => {
    const coloured = phasesReport({ view: runPhasesFixture() }, colors(true));
    expect(coloured).toMatch(ANSI);
    expect(stripAnsi(coloured)).toBe(report);
    expect(report).not.toMatch(ANSI);
  });
});

describe('erg phases', () => {
  test('asks for the run’s phases and prints the report', async () => {
    const out = await erg(['phases', RUN_ID], { api: answering({ status: 200, body: runPhasesFixture() }) });
    expect(out.code).toBe(0);
    expect(out.stderr).toBe('');
    expect(out.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET ${PATH}`]);
    expect(out.stdout).toBe(phasesReport({ view: runPhasesFixture() }, plain));
  });

  test("--json prints the API's body as it came", async () => {
    const out = await erg(['phases', RUN_ID, '--json'], { api: answering({ status: 200, body: runPhasesFixture() }) });
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual(runPhasesFixture());
  });

  test('a run without marks: says so and how to mark phases, exit 0', async () => {
    const out = await erg(['phases', RUN_ID], { api: answering({ status: 200, body: noMarks() }) });
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(
      [
        `Run ${RUN_ID} has no phases: its workload marked none.`,
        'To measure phases, have the workload mark them:',
        '  erg-mark begin NAME … erg-mark end NAME             in a job script (erg-mark step [NAME] counts steps)',
        '  import erg; with erg.phase("NAME"): …               in Python (erg.step() counts steps)',
        "  phases: [{ name: NAME, begin: REGEX, end: REGEX }]  in the campaign spec, to read them from the workload's log",
        '',
      ].join('\n'),
    );
    const json = await erg(['phases', RUN_ID, '--json'], { api: answering({ status: 200, body: noMarks() }) });
    expect(JSON.parse(json.stdout)).toEqual(noMarks());
  });

  test('marks but no phases in the figures: says how many marks there are', async () => {
    const view = runPhasesFixture({ phases: null });
    const out = await erg(['phases', RUN_ID], { api: answering({ status: 200, body: view }) });
    expect(out.code).toBe(0);
    expect(out.stdout.split('\n')[0]).toBe(`Run ${RUN_ID} has no phases: its energy figures (computed 2026-11-30T11:59:20.000Z) hold none, though it has 4,256 marks by py, sh on nid001, nid002.`);
  });

  test("a run that has not ended (409): the API's reason, as erg run gives it for energy; --json fails instead", async () => {
    const message = `run ${RUN_ID} is running: phases are computed with its energy, over its workload window, once it has ended`;
    const api = answering({ status: 409, body: { error: { code: 'ERG_NOT_READY', message } } });
    const out = await erg(['phases', RUN_ID], { api });
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(`Phases: no figures yet — ${message}\n`);
    const json = await erg(['phases', RUN_ID, '--json'], { api });
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(json.stderr).toContain(message);
  });

  test('a run that does not exist: exit 2 with the API’s message', async () => {
    const out = await erg(['phases', RUN_ID], { api: routes({}) });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`no route GET ${PATH}`);
  });

  test('a bad run id is a usage error before any request', async () => {
    const out = await erg(['phases', 'not-a-uuid'], { api: answering({ status: 500 }) });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/not a run id/);
    expect(out.requests).toEqual([]);
  });
});
