// XML escaping for the JUnit report. Configuration keys and notes may hold any character, and a
// report that does not parse fails a CI job for the wrong reason.

// Characters XML 1.0 does not allow at all, even escaped: C0 controls but tab/LF/CR, lone
// surrogates, U+FFFE and U+FFFF. They become U+FFFD.
const NOT_XML = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text content: `&`, `<` and `>` escaped (`>` for the sake of `]]>`). */
export function xmlText(text: string): string {
  return text.replace(NOT_XML, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An attribute value for double quotes; tabs and line breaks as references, else parsers fold them into spaces. */
export function xmlAttr(text: string): string {
  return xmlText(text).replace(/"/g, '&quot;').replace(/'/g, '&apos;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
}

/** `<name a="1" b="2"` with every value escaped (no closing bracket). */
export function openTag(name: string, attributes: Record<string, string | number>): string {
  const attrs = Object.entries(attributes).map(([k, v]) => ` ${k}="${xmlAttr(String(v))}"`);
  return `<${name}${attrs.join('')}`;
}
