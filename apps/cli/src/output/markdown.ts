import type { Column } from './table';

/** Text safe inside a Markdown table cell: pipes escaped, line breaks as `<br>`, markup characters escaped. */
export function mdCell(text: string): string {
  return text
    .replace(/([\\`*_[\]|<>])/g, '\\$1')
    .replace(/\r?\n/g, '<br>');
}

/** `text` as inline code, with a fence longer than any backtick run inside it. */
export function mdCode(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text.replace(/\|/g, '\\|')}${pad}${fence}`;
}

/** A GitHub-flavoured Markdown table; cells must already be escaped (mdCell / mdCode). */
export function renderMarkdownTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const header = `| ${columns.map((c) => c.header).join(' | ')} |`;
  const rule = `| ${columns.map((c) => (c.align === 'right' ? '---:' : '---')).join(' | ')} |`;
  return [header, rule, ...rows.map((r) => `| ${columns.map((_, i) => r[i] ?? '').join(' | ')} |`)].join('\n') + '\n';
}
