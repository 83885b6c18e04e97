import { parseDocument, visit } from 'yaml';

const PLACEHOLDER = '"[redacted]"';

/**
 * A suite's YAML text with every scalar whose value is the webhook secret replaced by
 * `"[redacted]"`, found in the parsed document rather than by searching the text: a folded (`>`),
 * literal (`|`), multi-line plain or quoted scalar, one with escapes, and the anchor an alias
 * points at all read as the secret while their text differs from it. The rest of the text stays
 * as written (spliced by each node's source range), and it is still the same YAML suite.
 */
export function cutSecretFromYaml(text: string, secret: string): string {
  // The same reading as the validation (decodeCampaignText), so a node found here is one it read.
  const doc = parseDocument(text, { version: '1.2', schema: 'core', uniqueKeys: true });
  const ranges: [number, number][] = [];
  visit(doc, {
    Scalar(_key, node) {
      if (node.range && String(node.value) === secret) ranges.push([node.range[0], node.range[1]]);
    },
  });
  // In document order, each piece copied once: the cost stays linear however often the secret appears.
  const parts: string[] = [];
  let copied = 0;
  for (const [start, end] of ranges.sort((a, b) => a[0] - b[0])) {
    if (start < copied) continue;
    // A block scalar's range takes its last line break; the next key needs it.
    parts.push(text.slice(copied, start), PLACEHOLDER, text[end - 1] === '\n' ? '\n' : '');
    copied = end;
  }
  parts.push(text.slice(copied));
  return parts.join('');
}
