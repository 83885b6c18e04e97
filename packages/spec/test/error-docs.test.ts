import { readFileSync } from 'node:fs';
import { ERROR_CATALOG } from '../src';

// The generator is the repository's script, so the test and `node scripts/generate-error-docs.js` agree.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const generator = require('../../../scripts/generate-error-docs.js') as {
  errorTables(catalog: typeof ERROR_CATALOG): string;
  withErrorTables(doc: string, tables: string): string;
  DOC_FILE: string;
  BEGIN: string;
  END: string;
};

describe("docs/api.md's error tables", () => {
  it('are the catalog (regenerate them with `node scripts/generate-error-docs.js` after a build)', () => {
    const doc = readFileSync(generator.DOC_FILE, 'utf8');
    const tables = generator.errorTables(ERROR_CATALOG);
    expect(doc.slice(doc.indexOf(generator.BEGIN), doc.indexOf(generator.END) + generator.END.length)).toBe(tables);
  });

  it('list every code of the catalog once, with its status and retryable', () => {
    const tables = generator.errorTables(ERROR_CATALOG);
    for (const [code, definition] of Object.entries(ERROR_CATALOG)) {
      const rows = tables.split('\n').filter((line) => line.includes(`| \`${code}\` |`));
      expect(rows).toHaveLength(1);
      expect(rows[0]).toContain(`| ${definition.status ?? '—'}`);
      expect(rows[0]).toContain(`| ${definition.retryable ? 'yes' : 'no'} |`);
    }
  });

  it('replace only what lies between the markers', () => {
    const doc = `# head\n\n${generator.BEGIN}\nstale\n${generator.END}\n\ntail\n`;
    expect(generator.withErrorTables(doc, 'NEW')).toBe('# head\n\nNEW\n\ntail\n');
    expect(() => generator.withErrorTables('# no markers\n', 'NEW')).toThrow(/no error-catalog markers/);
  });
});
