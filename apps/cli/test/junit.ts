// Reading back the JUnit reports erg writes: validation against test/fixtures/junit.xsd and a
// small parser for the one layout erg emits. Shared by the unit and end-to-end tests.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { validateXML } from 'xmllint-wasm';

const XSD = readFileSync(path.join(__dirname, 'fixtures', 'junit.xsd'), 'utf8');

export async function expectValidJunit(xml: string): Promise<void> {
  const result = await validateXML({ xml: [{ fileName: 'report.xml', contents: xml }], schema: [{ fileName: 'junit.xsd', contents: XSD }] });
  if (!result.valid) throw new Error(`report.xml does not match junit.xsd:\n${result.errors.map((e) => e.rawMessage).join('\n')}\n${xml}`);
}

/** The XML character and entity references JUnit reports use, decoded. */
function decode(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#([0-9]+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}

export interface ParsedCase {
  classname: string;
  name: string;
  outcome: string | null;
  type: string | null;
  message: string | null;
  body: string;
}

/** The testcases of a report, read with regular expressions (enough for the one layout erg writes). */
export function testcases(xml: string): ParsedCase[] {
  return [...xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)">([\s\S]*?)<\/testcase>/g)].map(([, classname, name, body]) => {
    const outcome = /<(failure|error|skipped)\b([^>]*)>/.exec(body!);
    const attr = (n: string) => (outcome ? (new RegExp(`${n}="([^"]*)"`).exec(outcome[2]!)?.[1] ?? null) : null);
    return { classname: decode(classname!), name: decode(name!), outcome: outcome?.[1] ?? null, type: attr('type'), message: attr('message') && decode(attr('message')!), body: decode(body!) };
  });
}

export function suiteCounts(xml: string): Record<string, number> {
  const open = /<testsuite name="[^"]*" tests="(\d+)" failures="(\d+)" errors="(\d+)" skipped="(\d+)">/.exec(xml)!;
  return { tests: Number(open[1]), failures: Number(open[2]), errors: Number(open[3]), skipped: Number(open[4]) };
}

