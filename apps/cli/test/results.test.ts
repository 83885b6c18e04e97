import { excludedLines, MARK_LEGEND, resultsCsv, resultsJson, resultsMarkdown, resultsTable, sortResults, colors, stripAnsi } from '@erg/cli';
import { CampaignResults } from '@erg/spec';
import { holmPText } from '@erg/format';
import { fixtureNodes, footprintFixture, onMachine, resultsFixture } from './fixtures/results';
import { ANSI, CAMPAIGN_ID, erg, parseCsv, routes } from './helpers';

const plain = colors(false);

/** The table without the study's answer, which comes last (results-answer.test.ts checks it). */
function beforeAnswer(table: string): string {
  const at = table.indexOf("\n\nThe study's answer (");
  return at < 0 ? table : table.slice(0, at + 1);
}

test("the fixtures are bodies the API's schema accepts", () => {
  for (const body of [resultsFixture(), footprintFixture(), footprintFixture({ cost: false }), footprintFixture({ carbon: false })]) {
    expect(CampaignResults.parse(body)).toEqual(body);
  }
});

describe('results as CSV', () => {
  test('one header row, one row per configuration, raw SI numbers that parse back to the input', () => {
    const results = resultsFixture();
    const rows = parseCsv(resultsCsv(results));
    const [header, ...body] = rows;
    expect(header).toEqual([
      'key', 'mode', 'param_n', 'n', 'time_s', 'time_ci95_low', 'time_ci95_high', 'energy_j', 'energy_ci95_low', 'energy_ci95_high',
      'avg_power_w', 'edp_js', 'pareto', 'best_time', 'best_energy', 'best_edp',
    ]);
    expect(body).toHaveLength(results.configurations.length);
    const col = (name: string) => header!.indexOf(name);
    results.configurations.forEach((c, i) => {
      const row = body[i]!;
      expect(row).toHaveLength(header!.length);
      expect(row[col('key')]).toBe(c.key);
      expect(row[col('mode')]).toBe(String(c.parameters.mode));
      expect(Number(row[col('param_n')])).toBe(c.parameters.n);
      const num = (name: string) => (row[col(name)] === '' ? null : Number(row[col(name)]));
      expect(num('n')).toBe(c.n);
      expect(num('time_s')).toBe(c.timeS.mean);
      expect(num('time_ci95_low')).toBe(c.timeS.ci95?.[0] ?? null);
      expect(num('time_ci95_high')).toBe(c.timeS.ci95?.[1] ?? null);
      expect(num('energy_j')).toBe(c.energyJ.mean);
      expect(num('energy_ci95_low')).toBe(c.energyJ.ci95?.[0] ?? null);
      expect(num('energy_ci95_high')).toBe(c.energyJ.ci95?.[1] ?? null);
      expect(num('avg_power_w')).toBe(c.avgPowerW.mean);
      expect(num('edp_js')).toBe(c.edpJs.mean);
      expect(row[col('pareto')]).toBe(String(c.paretoOptimal));
      expect(row[col('best_time')]).toBe(String(results.best?.time === c.key));
      expect(row[col('best_energy')]).toBe(String(results.best?.energy === c.key));
      expect(row[col('best_edp')]).toBe(String(results.best?.edp === c.key));
    });
  });

  test('quotes what RFC 4180 requires and ends lines with CRLF', () => {
    const text = resultsCsv(resultsFixture());
    expect(text).toContain('"mode=a,b;n=1","a,b",');
    expect(text.split('\r\n').at(-1)).toBe('');
    expect(text.replace(/\r\n/g, '')).not.toContain('\n');
  });
});

describe('results as JSON', () => {
  test("the API's object, unchanged without --sort, configurations sorted with it", () => {
    const results = resultsFixture();
    expect(JSON.parse(resultsJson(results))).toEqual(results);
    const sorted = JSON.parse(resultsJson(sortResults(results, 'energy')));
    expect(sorted.configurations.map((c: { key: string }) => c.key)).toEqual(['mode=z;n=3', 'mode=x=y;n=2', 'mode=a,b;n=1', 'mode=q;n=4']);
    expect({ ...sorted, configurations: [] }).toEqual({ ...results, configurations: [] });
  });

  test('sorting by time and EDP; configurations without a mean go last', () => {
    const keys = (by: 'time' | 'edp') => sortResults(resultsFixture(), by).configurations.map((c) => c.key);
    expect(keys('time')).toEqual(['mode=a,b;n=1', 'mode=x=y;n=2', 'mode=z;n=3', 'mode=q;n=4']);
    expect(keys('edp')).toEqual(['mode=x=y;n=2', 'mode=a,b;n=1', 'mode=z;n=3', 'mode=q;n=4']);
  });
});

describe('results as a table', () => {
  const table = resultsTable(resultsFixture(), plain);
  const lines = table.split('\n');

  test('one row per measured configuration, in the API order, with parameters as columns and aligned cells', () => {
    expect(lines[0]).toMatch(/^marks\s+mode\s+param_n\s+n\s+time\s+± 95 %\s+energy\s+± 95 %\s+energy \(Wh\)\s+avg power\s+EDP\s+pareto$/);
    const rows = lines.slice(1, 4);
    expect(rows[0]).toMatch(/^P E\s+z\s+3\s+5\s+40\.0 s\s+± 981 ms\s+9\.00 kJ\s+± 98\.\d J\s+2\.50 Wh\s+225 W\s+360 kJ·s\s+front$/);
    expect(rows[1]).toMatch(/^P T\s+a,b\s+1\s+5\s+10\.0 s/);
    expect(rows[2]).toMatch(/^P D\s+x=y\s+2\s+5\s+11\.0 s/);
    // The figures are right-aligned: every line's figures end in the same column, where the
    // (left-aligned) pareto column starts; without claims, where every line ends.
    expect(new Set([lines[0], ...rows].map((r) => r!.search(/\S+\s*$/))).size).toBe(1);
    const withoutClaims = resultsTable({ ...resultsFixture(), claims: null }, plain).split('\n').slice(0, 4);
    expect(new Set(withoutClaims.map((r) => r.length)).size).toBe(1);
  });

  test('legend, trade-off and the configurations without measurements under the table', () => {
    expect(table).toContain(MARK_LEGEND);
    // The trade-off is the claims' (with both intervals); without claims, the point estimates of before.
    expect(table).toContain(`\nTrade-off: ${resultsFixture().claims!.tradeoff!.statement}.\n`);
    expect(table).toMatch(/Trade-off: choosing mode=z;n=3 over mode=a,b;n=1 saves 55 % energy \[5\d %, 5\d %\] for 300 % more time \[\d+ %, \d+ %\]\./);
    const pointOnly = resultsTable({ ...resultsFixture(), claims: null }, plain);
    expect(pointOnly).toMatch(/Trade-off: the most frugal configuration \(mode=z;n=3\) saves 11\.0 kJ \(55\.0 %\) against the fastest \(mode=a,b;n=1\) and takes 30\.0 s \(300\.0 %\) longer\./);
    expect(pointOnly.split('\n')[0]).not.toContain('pareto');
    expect(table).toContain('Without measurements (1):\n  mode=q;n=4: no runs');
  });

  test('colour only when asked; the text is the same without it', () => {
    const coloured = resultsTable(resultsFixture(), colors(true));
    expect(coloured).toMatch(ANSI);
    expect(stripAnsi(coloured)).toBe(table);
    expect(table).not.toMatch(ANSI);
  });

  test("a search's untried candidates: how many, and where to page through them, under the table and in Markdown", () => {
    const search = { ...resultsFixture(), unmeasured: { configurations: 49_994, list: `/v1/campaigns/${CAMPAIGN_ID}/configurations?measured=false` } };
    const line = `Not tried by the search (49,994 configurations): counted, not listed; GET /v1/campaigns/${CAMPAIGN_ID}/configurations?measured=false pages through them`;
    expect(resultsTable(search, plain)).toContain(`\n${line}\n`);
    expect(resultsMarkdown(search)).toContain(`\n${line.replace(`GET /v1/campaigns/${CAMPAIGN_ID}/configurations?measured=false`, `\`GET /v1/campaigns/${CAMPAIGN_ID}/configurations?measured=false\``)}\n`);
    expect(table).not.toContain('Not tried');
  });

  test('no Wh column when every configuration used less than 1 Wh', () => {
    const small = resultsFixture();
    for (const c of small.configurations) if (c.energyJ.mean !== null) c.energyJ.mean /= 100;
    expect(resultsTable(small, plain)).not.toContain('Wh');
  });
});

describe('results as Markdown', () => {
  const md = resultsMarkdown(resultsFixture());

  test('a GFM table with the marks in bold, right-aligned figures, the legend and the exclusions', () => {
    const tableLines = md.split('\n').filter((l) => l.startsWith('|'));
    expect(tableLines[0]).toBe('| marks | mode | param_n | n | time | ± 95 % | energy | ± 95 % | energy (Wh) | avg power | EDP | pareto |');
    expect(tableLines[1]).toBe('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
    expect(tableLines).toHaveLength(5);
    expect(tableLines[2]).toMatch(/^\| \*\*P E\*\* \| z \| 3 \| 5 \| 40\.0 s \|/);
    expect(tableLines[3]).toMatch(/^\| \*\*P T\*\* \| a,b \|/);
    expect(tableLines[4]).toMatch(/^\| \*\*P D\*\* \| x=y \|/);
    expect(md).toContain('Marks: P on the Pareto front');
    expect(md).toContain('- `mode=q;n=4`: no runs');
  });
});

describe('claims and node effects', () => {
  test('the table says what the results claim: the summary, each best with its closest ratio and interval, each entry on the front', () => {
    const results = resultsFixture();
    const claims = results.claims!;
    const table = resultsTable(results, plain);
    const ratio = (id: string) => {
      const c = claims.comparisons.find((x) => x.id === id)!;
      return `×${c.ratio!.toPrecision(3)} [${c.interval![0]!.toPrecision(3)}, ${c.interval![1]!.toPrecision(3)}]${holmPText(c)}`;
    };
    expect(table).toContain(
      [
        `Claims (95 %, Holm over ${claims.family} comparisons):`,
        `  Summary: ${claims.summary}.`,
        `  Fastest: mode=a,b;n=1, ahead of every other (closest mode=x=y;n=2 ${ratio('time:mode=a,b;n=1|mode=x=y;n=2')})`,
        `  Least energy: mode=z;n=3, ahead of every other (closest mode=x=y;n=2 ${ratio('energy:mode=x=y;n=2|mode=z;n=3')})`,
      ].join('\n'),
    );
    expect(claims.summary).toMatch(/^at 95 % \(Holm over \d+ comparisons\): fastest mode=a,b;n=1; least energy mode=z;n=3; lowest EDP mode=x=y;n=2; /);
    expect(table).toContain('Pareto (95 %, Holm over');
    const md = resultsMarkdown(results);
    expect(md).toContain(`**Claims (95 %, Holm over ${claims.family} comparisons):**\n\n- Summary: `);
    expect(md).toContain('- Fastest: mode=a,b;n=1, ahead of every other (closest mode=x=y;n=2 ×1.10 \\[');
  });

  test('ties are named as ties, an entry off the front with the comparisons against its dominator, and an A/A campaign reads no distinguishable difference', () => {
    const results = resultsFixture();
    const claims = results.claims!;
    // As the API says of two configurations it cannot tell apart.
    results.claims = {
      ...claims,
      distinguishable: false,
      summary: 'no distinguishable difference between the 3 configurations at 95 % (Holm over 8 comparisons)',
      comparisons: claims.comparisons.map((c) => ({ ...c, distinguishable: false, pAdjusted: 0.4 })),
      ranks: claims.ranks.map((r) => ({ ...r, tiedWith: ['mode=a,b;n=1', 'mode=x=y;n=2', 'mode=z;n=3'].filter((k) => k !== r.best), distinguishable: false })),
      pareto: [
        { id: 'mode=z;n=3', status: 'front', against: null, tiedWith: ['mode=x=y;n=2'], comparisons: [] },
        { id: 'mode=a,b;n=1', status: 'front', against: null, tiedWith: [], comparisons: [] },
        { id: 'mode=x=y;n=2', status: 'tied_with_front', against: 'mode=a,b;n=1', tiedWith: [], comparisons: ['time:mode=a,b;n=1|mode=x=y;n=2', 'energy:mode=a,b;n=1|mode=x=y;n=2'] },
      ],
    };
    const table = resultsTable(results, plain);
    expect(table).toContain('  Summary: no distinguishable difference between the 3 configurations at 95 % (Holm over 8 comparisons).');
    expect(table).toMatch(/  Fastest: mode=a,b;n=1, tied with mode=x=y;n=2 ×1\.10 \[1\.\d\d, 1\.\d\d\] Holm p [0-9.]+, mode=z;n=3 ×4\.00 \[/);
    expect(table).toMatch(/  mode=x=y;n=2: ≈ front \(mode=a,b;n=1\) — time ×1\.10 \[.*\]( Holm p [0-9.]+)? \(tied\), energy ×/);
    const rows = table.split('\n').slice(1, 4);
    expect(rows[0]).toMatch(/front, tied with mode=x=y;n=2$/);
    expect(rows[2]).toMatch(/≈ front \(mode=a,b;n=1\)$/);
  });

  test('node effects: a table of residuals per node, the note and the confounded configurations; nothing where the runs used one node', () => {
    const results = { ...resultsFixture(), nodes: fixtureNodes() };
    const table = resultsTable(results, plain);
    expect(table).toMatch(/\nNode effects \(3 nodes\):\n  node\s+runs\s+time residual\s+energy residual\s+differs\n  gpu-01\s+6\s+\+0\.1 % \[-0\.4 %, \+0\.6 %\]\s+-2\.0 % \[-3\.5 %, -0\.5 %\]\s+yes\n/);
    expect(table).toContain('  gpu-03     4  +0.1 % [-0.6 %, +0.7 %]  +5.2 % [+4.0 %, +6.4 %]  yes');
    expect(table).toContain(`  ${fixtureNodes().note}.\n  Confounded with one node:\n    mode=z;n=3: all 5 runs on gpu-01`);
    const md = resultsMarkdown(results);
    expect(md).toContain('**Node effects (3 nodes):**\n\n| node | runs | time residual | energy residual | differs |');
    expect(md).toContain('**Confounded with one node:**\n\n- mode=z;n=3: all 5 runs on gpu-01');
    expect(resultsTable(resultsFixture(), plain)).not.toContain('Node effects');
  });
});

describe('configurations without measurements', () => {
  test('a few are listed one per line; many (a search leaves most untried) are summed up per reason', () => {
    expect(excludedLines([{ key: 'a=1', why: 'no completed runs' }])).toEqual(['a=1: no completed runs']);
    const many = Array.from({ length: 988 }, (_, i) => ({ key: `a=${i}`, why: 'no completed runs' }));
    expect(excludedLines([...many, { key: 'b=1', why: 'every run failed' }])).toEqual(['no completed runs: 988 configurations (a=0, a=1, a=2, and 985 more)', 'every run failed: 1 configuration (b=1)']);
  });
});

describe('runs left out', () => {
  test('the table and the Markdown name each run whose figures do not count, and why', () => {
    const results = resultsFixture();
    const key = results.configurations[0]!.key;
    results.runsLeftOut = [
      { runId: '00000000-0000-4000-8000-000000000003', key, repetition: 3, leftOut: 'energy', why: 'no power samples inside its window' },
      { runId: '00000000-0000-4000-8000-000000000004', key, repetition: 4, leftOut: 'run', why: 'its workload window is empty (0 s)' },
    ];
    const table = stripAnsi(resultsTable(results, plain));
    expect(table).toContain(`Runs left out (2):\n  run 3 of ${key}: energy not counted (its time is) — no power samples inside its window\n  run 4 of ${key}: not counted — its workload window is empty (0 s)`);
    expect(resultsMarkdown(results)).toContain(`**Runs left out (2):**\n\n- run 3 of ${key}: energy not counted (its time is) — no power samples inside its window`);
    expect(resultsTable(resultsFixture(), plain)).not.toContain('Runs left out');
  });

  test('configurations with flagged runs are named with how many of their runs carry each flag', () => {
    const results = resultsFixture();
    const c = results.configurations[0]!;
    c.flaggedRuns = { shared_node: 2, too_short: 1 };
    const table = stripAnsi(resultsTable(results, plain));
    expect(table).toContain(`Runs to read with care (see each run's warnings):\n  ${c.key}: shared_node 2 of ${c.n} run(s), too_short 1 of ${c.n} run(s)`);
    expect(resultsTable(resultsFixture(), plain)).not.toContain('read with care');
  });
});

describe('power state and machines under the table', () => {
  const POWER_LINE = 'Power state: cluster erg-local has no power knobs erg can set (no node helper): runs ran at whatever power state its nodes were in';
  const PUBLISHABLE_LINE = 'publishable: yes — all 15 checked runs passed the validity gates';

  test('the last line says whether the results are publishable, and why not', () => {
    const results = resultsFixture();
    results.validity = {
      publishable: false, runs: 15, valid: 13, invalid: 2, unchecked: 0, excluded: 0, failures: { longest_gap: 2 },
      note: '2 of 15 runs invalid: longest gap 20.1 s > 3 s at n1 cpu0.power (and 1 more); they count, flagged invalid: leave them out with validity.excludeInvalid or ?valid=only',
    };
    const line = `publishable: no — ${results.validity.note}`;
    expect(beforeAnswer(resultsTable(results, plain)).endsWith(`\n\n${line}\n`)).toBe(true);
    expect(resultsMarkdown(results)).toContain('\n\npublishable: no — 2 of 15 runs invalid: longest gap 20.1 s \\> 3 s at n1 cpu0.power (and 1 more)');
    // An API from before validity says nothing of it.
    const { validity: _validity, ...older } = results;
    expect(resultsTable(older as typeof results, plain)).not.toContain('publishable');
  });

  const ORDER_LINE = 'Run order: randomized complete blocks, seed 1234';

  test("the campaign's power note and run order are under the table, which itself is unchanged", () => {
    const results = resultsFixture();
    const table = resultsTable(results, plain);
    expect(beforeAnswer(table).endsWith(`\n\n${POWER_LINE}\n${ORDER_LINE}\n\n${PUBLISHABLE_LINE}\n`)).toBe(true);
    const { power: _power, validity: _validity, design: _design, ...without } = results;
    const before = resultsTable(without as typeof results, plain);
    expect(before).not.toContain('Power state');
    expect(before).not.toContain('Run order');
    expect(table.startsWith(beforeAnswer(before).trimEnd())).toBe(true);
    expect(resultsMarkdown(results)).toContain(`\n\n${POWER_LINE}\n\n${ORDER_LINE}\n\n${PUBLISHABLE_LINE}\n`);
  });

  test('the run order says which order, and the seed of a randomized one', () => {
    const results = resultsFixture();
    results.design = { ...results.design, order: 'configuration-major', seed: null };
    expect(resultsTable(results, plain)).toContain('\nRun order: configuration-major (every repetition of a configuration, then the next)\n');
    const { power: _power, ...withoutPower } = resultsFixture();
    expect(beforeAnswer(resultsTable(withoutPower as typeof results, plain)).endsWith(`\n\n${ORDER_LINE}\n\n${PUBLISHABLE_LINE}\n`)).toBe(true);
  });

  test('configurations that ran on more than one kind of machine are listed with how the kinds differ', () => {
    const results = resultsFixture();
    const c = results.configurations[1]!;
    c.fingerprints = 2;
    c.fingerprintDifferences = ['driverVersion: 550.54.15 (2 runs) vs 535.104.05 (3 runs)', 'gpus[0].vbios: 96.00.74.00.01 (2 runs) vs 96.00.61.00.01 (3 runs)'];
    const table = resultsTable(results, plain);
    expect(table).toContain(
      [
        'Ran on differing machines (`erg run RUN` shows what each node was):',
        `  ${c.key}: 2 kinds of machine`,
        '    driverVersion: 550.54.15 (2 runs) vs 535.104.05 (3 runs)',
        '    gpus[0].vbios: 96.00.74.00.01 (2 runs) vs 96.00.61.00.01 (3 runs)',
      ].join('\n'),
    );
    expect(resultsMarkdown(results)).toContain(`**Ran on differing machines:**\n\n- mode=a,b;n=1: 2 kinds of machine\n  - driverVersion: 550.54.15 (2 runs) vs 535.104.05 (3 runs)`);
    expect(resultsTable(resultsFixture(), plain)).not.toContain('differing machines');
  });

  test('grouped by fingerprint: a fingerprint column (first 12 characters), marks by entry id, CSV with the class', () => {
    const results = resultsFixture();
    const [frugal, fast, none, mid] = results.configurations;
    const fastOther = { ...onMachine(fast!, 'ffff0000111122223333'), paretoOptimal: false };
    results.configurations = [onMachine(frugal!, 'aaaa1111bbbb2222cccc'), onMachine(fast!, 'aaaa1111bbbb2222cccc'), fastOther, onMachine(none!, 'aaaa1111bbbb2222cccc'), onMachine(mid!, 'aaaa1111bbbb2222cccc')];
    results.groupedBy = 'fingerprint';
    const id = (i: number) => results.configurations[i]!.id;
    results.best = { time: id(1), energy: id(0), edp: id(4) };
    results.excluded = [{ key: id(3), why: 'no runs' }];
    const lines = resultsTable(results, plain).split('\n');
    expect(lines[0]).toMatch(/^marks\s+mode\s+param_n\s+fingerprint\s+n\s+time\s+/);
    expect(lines[1]).toMatch(/^P E\s+z\s+3\s+aaaa1111bbbb\s+5\s+40\.0 s/);
    expect(lines[2]).toMatch(/^P T\s+a,b\s+1\s+aaaa1111bbbb\s+5\s+10\.0 s/);
    expect(lines[3]).toMatch(/^\s+a,b\s+1\s+ffff00001111\s+5\s+10\.0 s/);
    expect(lines[4]).toMatch(/^P D\s+x=y\s+2\s+aaaa1111bbbb\s+5/);
    const csv = parseCsv(resultsCsv(results));
    expect(csv[0]!.slice(0, 4)).toEqual(['key', 'fingerprint', 'mode', 'param_n']);
    expect(csv[3]!.slice(0, 2)).toEqual(['mode=a,b;n=1', 'ffff0000111122223333']);
    expect(csv[2]![csv[0]!.indexOf('best_time')]).toBe('true');
    expect(csv[3]![csv[0]!.indexOf('best_time')]).toBe('false');
    expect(parseCsv(resultsCsv(resultsFixture()))[0]).not.toContain('fingerprint');
  });
});

describe('erg results', () => {
  const api = routes({ [`GET /v1/campaigns/${CAMPAIGN_ID}/results`]: { status: 200, body: resultsFixture() } });

  test.each(['table', 'csv', 'json', 'markdown'])('--format %s writes only the results to stdout', async (format) => {
    const out = await erg(['results', CAMPAIGN_ID, '--format', format], { api });
    expect(out.code).toBe(0);
    expect(out.stderr).toBe('');
    expect(out.stdout).not.toMatch(ANSI);
    if (format === 'json') expect(JSON.parse(out.stdout).campaignId).toBe(CAMPAIGN_ID);
    if (format === 'csv') expect(parseCsv(out.stdout)).toHaveLength(5);
  });

  test('--valid-only asks the API for ?valid=only; without it nothing is asked', async () => {
    const out = await erg(['results', CAMPAIGN_ID, '--valid-only'], { api });
    expect(out.code).toBe(0);
    expect(out.requests[0]!.query.get('valid')).toBe('only');
    expect((await erg(['results', CAMPAIGN_ID], { api })).requests[0]!.query.has('valid')).toBe(false);
  });

  test('--group-by fingerprint asks the API for ?groupBy=fingerprint; without it nothing is asked', async () => {
    const grouped = await erg(['results', CAMPAIGN_ID, '--group-by', 'fingerprint'], { api });
    expect(grouped.code).toBe(0);
    expect(grouped.requests[0]!.query.get('groupBy')).toBe('fingerprint');
    expect((await erg(['results', CAMPAIGN_ID], { api })).requests[0]!.query.has('groupBy')).toBe(false);
    const bad = await erg(['results', CAMPAIGN_ID, '--group-by', 'node'], { api });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected one of configuration, fingerprint/);
    expect(bad.requests).toEqual([]);
  });

  test('a refused groupBy names its flag', async () => {
    const refuse = routes({
      [`GET /v1/campaigns/${CAMPAIGN_ID}/results`]: { status: 400, body: { error: { code: 'ERG_VALIDATION', message: 'invalid request querystring: groupBy: bad', issues: [{ path: 'groupBy', message: 'bad', code: 'invalid_value' }] } } },
    });
    const out = await erg(['results', CAMPAIGN_ID, '--group-by', 'fingerprint'], { api: refuse });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('groupBy: bad (--group-by)');
  });

  test('an unknown format or sort key is a usage error (exit 2)', async () => {
    const bad = await erg(['results', CAMPAIGN_ID, '--format', 'xml'], { api });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected one of table, csv, json, markdown/);
    expect((await erg(['results', CAMPAIGN_ID, '--sort', 'power'], { api })).code).toBe(2);
  });
});

describe('carbon and cost', () => {
  const FIXED = ['key', 'mode', 'param_n', 'n', 'time_s', 'time_ci95_low', 'time_ci95_high', 'energy_j', 'energy_ci95_low', 'energy_ci95_high', 'avg_power_w', 'edp_js', 'pareto', 'best_time', 'best_energy', 'best_edp'];

  test('no carbon or cost columns, marks or legend words where no configuration has such figures', () => {
    const results = resultsFixture();
    const table = resultsTable(results, plain);
    expect(table.split('\n')[0]).not.toMatch(/carbon|cost/);
    expect(table).toContain(`Marks: ${MARK_LEGEND};`);
    expect(table).not.toMatch(/least carbon|cheapest|gCO₂e/);
    expect(resultsMarkdown(results)).not.toMatch(/\| carbon \||\| cost \|/);
    expect(parseCsv(resultsCsv(results))[0]).toEqual(FIXED);
  });

  test('the table gains carbon and cost with their ± after EDP, least carbon (C) and cheapest (M) among the marks', () => {
    const lines = resultsTable(footprintFixture(), plain).split('\n');
    expect(lines[0]).toMatch(/\s+avg power\s+EDP\s+carbon\s+± 95 %\s+cost\s+± 95 %\s+pareto$/);
    // frugal: least energy and least carbon, but off the front on (time, cost): mid is cheaper and about as fast.
    expect(lines[1]).toMatch(/^E C\s+z\s+3\s+5\s+40\.0 s.*360 kJ·s\s+1\.05 gCO₂e\s+± 0\.0115 gCO₂e\s+0\.0287 EUR\s+± 0\.000691 EUR\s+dominated by mode=x=y;n=2$/);
    expect(lines[2]).toMatch(/^P T\s+a,b\s+.*200 kJ·s\s+2\.33 gCO₂e\s+± 0\.0458 gCO₂e\s+0\.00894 EUR\s+± 0\.000176 EUR\s+front\s*$/);
    expect(lines[3]).toMatch(/^P D M\s+x=y\s+.*132 kJ·s\s+1\.40 gCO₂e\s+± 0\.0115 gCO₂e\s+0\.00884 EUR/);
    expect(new Set(lines.slice(0, 4).map((l) => l.search(/(pareto|front|dominated by \S+)\s*$/))).size).toBe(1);
  });

  test("the legend says which objectives the front is on (the response's), what C and M mean, and what the columns hold", () => {
    const table = resultsTable(footprintFixture(), plain);
    expect(table).toContain(
      'Marks: P on the Pareto front of (time, cost) · T fastest · E least energy · D lowest energy-delay product · C least carbon · M cheapest; ± is the half-width of the 95 % interval of the mean. ' +
        "Carbon is gCO₂e per run (the nodes' energy × the site's PUE × the grid's intensity), cost is per run in EUR (node-hours and kWh at the cluster's price); `erg run RUN` shows what a run's figures were computed with.",
    );
    const onCarbon = { ...resultsFixture(), objectives: ['time', 'carbon'] as ['time', 'carbon'] };
    expect(resultsTable(onCarbon, plain)).toContain('Marks: P on the Pareto front of (time, carbon) · T fastest · E least energy · D lowest energy-delay product;');
  });

  test('carbon without a price: the carbon columns and C, no cost column and no M', () => {
    const results = footprintFixture({ cost: false });
    const table = resultsTable(results, plain);
    expect(table.split('\n')[0]).toMatch(/EDP\s+carbon\s+± 95 %\s+pareto$/);
    expect(table.split('\n')[3]).toMatch(/^P D\s+x=y/);
    expect(table).toContain('· C least carbon;');
    expect(table).not.toMatch(/cheapest|EUR|cost is/);
    expect(parseCsv(resultsCsv(results))[0]).toEqual([...FIXED, 'carbon_gco2e', 'carbon_ci95_low', 'carbon_ci95_high', 'best_carbon']);
  });

  test('a configuration without a carbon figure among others reads — there', () => {
    const results = footprintFixture();
    results.configurations[1]!.carbon = { n: 0, mean: null, std: null, ci95: null, cv: null, min: null, max: null };
    expect(resultsTable(results, plain).split('\n')[2]).toMatch(/200 kJ·s\s+—\s+—\s+0\.00894 EUR/);
  });

  test('Markdown: the same columns and marks, the legend in italics', () => {
    const md = resultsMarkdown(footprintFixture());
    const tableLines = md.split('\n').filter((l) => l.startsWith('|'));
    expect(tableLines[0]).toBe('| marks | mode | param_n | n | time | ± 95 % | energy | ± 95 % | energy (Wh) | avg power | EDP | carbon | ± 95 % | cost | ± 95 % | pareto |');
    expect(tableLines[2]).toMatch(/^\| \*\*E C\*\* \| z \| .* \| 1\.05 gCO₂e \| ± 0\.0115 gCO₂e \| 0\.0287 EUR \| ± 0\.000691 EUR \| dominated by mode=x=y;n=2 \|$/);
    expect(tableLines[4]).toMatch(/^\| \*\*P D M\*\* \| x=y \|/);
    expect(md).toContain('_Marks: P on the Pareto front of (time, cost) ·');
  });

  test('CSV: the columns of today in their order, then raw carbon and cost with their intervals, the currency and best_carbon / best_cost', () => {
    const results = footprintFixture();
    const [header, ...body] = parseCsv(resultsCsv(results));
    expect(header).toEqual([
      ...FIXED, 'carbon_gco2e', 'carbon_ci95_low', 'carbon_ci95_high', 'cost', 'cost_ci95_low', 'cost_ci95_high', 'currency', 'best_carbon', 'best_cost',
    ]);
    const col = (name: string) => header!.indexOf(name);
    results.configurations.forEach((c, i) => {
      const row = body[i]!;
      const num = (name: string) => (row[col(name)] === '' ? null : Number(row[col(name)]));
      expect(num('carbon_gco2e')).toBe(c.carbon.mean);
      expect(num('carbon_ci95_low')).toBe(c.carbon.ci95?.[0] ?? null);
      expect(num('carbon_ci95_high')).toBe(c.carbon.ci95?.[1] ?? null);
      expect(num('cost')).toBe(c.cost.mean);
      expect(num('cost_ci95_low')).toBe(c.cost.ci95?.[0] ?? null);
      expect(num('cost_ci95_high')).toBe(c.cost.ci95?.[1] ?? null);
      expect(row[col('currency')]).toBe(c.cost.mean === null ? '' : 'EUR');
      expect(row[col('best_carbon')]).toBe(String(results.best?.carbon === c.key));
      expect(row[col('best_cost')]).toBe(String(results.best?.cost === c.key));
      expect(row[col('pareto')]).toBe(String(c.paretoOptimal));
    });
  });

  test("JSON is the API's answer, carbon and cost included", () => {
    expect(JSON.parse(resultsJson(footprintFixture()))).toEqual(footprintFixture());
  });
});

describe('erg results --objectives', () => {
  const PATH = `GET /v1/campaigns/${CAMPAIGN_ID}/results`;
  const api = routes({ [PATH]: { status: 200, body: footprintFixture() } });

  test('asks the API for ?objectives=…; without the flag nothing is asked', async () => {
    const out = await erg(['results', CAMPAIGN_ID, '--objectives', 'time, cost'], { api });
    expect(out.code).toBe(0);
    expect(out.requests[0]!.query.get('objectives')).toBe('time,cost');
    expect(out.stdout).toContain('P on the Pareto front of (time, cost)');
    expect(out.stdout).toMatch(/^P D M\s+x=y/m);
    const both = await erg(['results', CAMPAIGN_ID, '--objectives', 'edp,carbon', '--group-by', 'fingerprint'], { api });
    expect(Object.fromEntries(both.requests[0]!.query)).toEqual({ objectives: 'edp,carbon', groupBy: 'fingerprint' });
    expect((await erg(['results', CAMPAIGN_ID], { api })).requests[0]!.query.has('objectives')).toBe(false);
  });

  test.each([
    ['time,power', '"power" is not an objective'],
    ['time,time', 'two distinct objectives separated by a comma, of time, energy, edp, carbon, cost'],
    ['time', 'two distinct objectives'],
    ['time,energy,carbon', 'two distinct objectives'],
  ])('%s is a usage error (exit 2) naming --objectives, before any request', async (value, why) => {
    const out = await erg(['results', CAMPAIGN_ID, '--objectives', value], { api });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('--objectives');
    expect(out.stderr).toContain(why);
    expect(out.requests).toEqual([]);
  });

  test('a refused objectives names its flag', async () => {
    const refuse = routes({
      [PATH]: {
        status: 400,
        body: { error: { code: 'ERG_VALIDATION', message: 'invalid request querystring: objectives: not supported here', issues: [{ path: 'objectives', message: 'not supported here', code: 'custom' }] } },
      },
    });
    const out = await erg(['results', CAMPAIGN_ID, '--objectives', 'time,carbon'], { api: refuse });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('objectives: not supported here (--objectives)');
  });
});
