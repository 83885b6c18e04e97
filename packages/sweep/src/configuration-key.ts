import { canonicalValue, IDENTIFIER, type ParamValue } from '@erg/spec';

/** The key of the single configuration of a campaign without parameters. Real keys always contain `=`. */
export const DEFAULT_CONFIGURATION_KEY = 'default';

/**
 * The stable identity of a configuration: `name=value` pairs, names sorted by code unit, joined
 * by `;` — e.g. `mb=8;offload=cpu;sp=2`. Declaration order does not matter, so a campaign edited
 * or re-submitted later maps the same point of the space to the same key. Unambiguous because
 * names are identifiers (no `=` or `;`) and values are SAFE_VALUE strings (no `;`).
 */
export function configurationKey(parameters: Readonly<Record<string, ParamValue>>): string {
  const names = Object.keys(parameters).sort();
  if (names.length === 0) return DEFAULT_CONFIGURATION_KEY;
  return names.map((name) => `${name}=${canonicalValue(parameters[name] as ParamValue)}`).join(';');
}

/** The inverse of configurationKey; values come back as their canonical strings. Throws on a malformed key. */
export function parseConfigurationKey(key: string): Record<string, string> {
  if (key === DEFAULT_CONFIGURATION_KEY) return {};
  const entries = key.split(';').map((pair): [string, string] => {
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    if (eq === -1 || !IDENTIFIER.test(name) || eq === pair.length - 1) {
      throw new Error(`${JSON.stringify(key)} is not a configuration key: expected name=value pairs joined by ";"`);
    }
    return [name, pair.slice(eq + 1)];
  });
  if (new Set(entries.map(([name]) => name)).size !== entries.length) {
    throw new Error(`${JSON.stringify(key)} is not a configuration key: a parameter appears twice`);
  }
  // fromEntries defines own properties, so even a hostile name cannot reach the prototype.
  return Object.fromEntries(entries);
}
