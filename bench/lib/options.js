// The benchmarks' one option parser (node:util parseArgs underneath). A script declares what it
// measures, its options — type, default and a description each — its positional arguments if it
// takes any, and an example or two; `--help` prints the usage text generated from that, and a
// mistake (an unknown option, a value that is not what the option takes, an argument too many or
// missing) is one line on stderr naming it, and exit status 2. A script calls this first, before
// it requires anything that could connect somewhere, so both answer without a database, Redis,
// SSH or a cluster.
//
//   const { opts, fail } = parseOptions({
//     script: __filename,
//     summary: 'What it measures, in a sentence or a few.',
//     options: {
//       runs: { type: 'integer', default: 1000, quick: 10, min: 1, description: 'runs in the campaign' },
//       quick: { type: 'boolean', description: 'a small run (a test runs it)' },
//     },
//     examples: ['node bench/x.js --runs 50'],
//   });
//
// Types: 'boolean' (default false unless declared), 'string', 'number', 'integer', 'json'; `list`:
// a comma-separated list of that type; `choices`: the values allowed; `min`: the least number
// allowed; `above`: a number the value must exceed; `check(value)`: returns what the value must be
// when it is not (e.g. 'a multiple of 200').
// `quick`: the default under --quick (a value given on the command line wins). `defaultText`: how
// the help names a default that is not a plain value (e.g. 'random'). Values come back typed, under
// the option's own name (opts['slow-runs']); positionals, declared as [{ name, type, default,
// required, description }], come back under their names too. -h/--help is added to every script.
//
// ERG_BENCH_OPTIONS=json prints the declaration as JSON and exits 0 (bench/test/options.test.ts
// checks the help against it).
'use strict';
const path = require('node:path');
const { parseArgs } = require('node:util');

const HELP = { type: 'boolean', short: 'h', description: 'print this text and exit' };
const WIDTH = 100;

class UsageError extends Error {}

/** The script's name as the user types it: bench/x.js. */
function scriptName(script) {
  return path.relative(path.resolve(__dirname, '..', '..'), script).split(path.sep).join('/');
}

function placeholder(spec) {
  if (spec.type === 'boolean') return '';
  if (spec.placeholder) return spec.placeholder;
  const one = spec.choices ? spec.choices.join('|') : { integer: 'N', number: 'X', json: 'JSON' }[spec.type] ?? 'VALUE';
  return spec.list ? `${one},${one},...` : one;
}

const show = (value) => (Array.isArray(value) ? value.join(',') : typeof value === 'object' ? JSON.stringify(value) : String(value));

function defaultOf(spec) {
  let text;
  if (spec.defaultText !== undefined) text = spec.defaultText;
  else if (spec.type === 'boolean') text = spec.default ? 'on' : 'off';
  else if (spec.default === undefined) text = 'none';
  else text = show(spec.default);
  return spec.quick !== undefined ? `${text}; ${show(spec.quick)} with --quick` : text;
}

/** `text` wrapped to WIDTH, every line after the first indented by `indent` spaces. */
function wrap(text, indent) {
  const lines = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent + line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

function usage(decl) {
  const name = scriptName(decl.script);
  const positionals = decl.positionals ?? [];
  const args = positionals.map((p) => (p.required ? `<${p.name}>` : `[${p.name}]`)).join(' ');
  const rows = [];
  for (const p of positionals) rows.push([p.name, `${p.description} (${p.required ? 'required' : `default: ${defaultOf(p)}`})`]);
  const options = Object.entries(decl.options);
  for (const [key, spec] of options) {
    const flag = `${spec.short ? `-${spec.short}, ` : ''}--${key}${spec.type === 'boolean' ? '' : ` ${placeholder(spec)}`}`;
    rows.push([flag, key === 'help' ? spec.description : `${spec.description} (default: ${defaultOf(spec)})`]);
  }
  const column = Math.min(30, Math.max(...rows.map(([flag]) => flag.length)) + 2);
  const row = ([flag, text]) => `  ${flag.length + 2 > column ? `${flag}\n${' '.repeat(column + 2)}` : flag.padEnd(column)}${wrap(text, column + 2)}`;
  const parts = [
    wrap(`${name}: ${decl.summary}`, 0),
    `Usage: node ${name}${args ? ` ${args}` : ''}${options.length > 1 ? ' [options]' : ''}`,
  ];
  if (positionals.length) parts.push(`Arguments:\n${rows.slice(0, positionals.length).map(row).join('\n')}`);
  parts.push(`Options:\n${rows.slice(positionals.length).map(row).join('\n')}`);
  parts.push(`Example${decl.examples.length > 1 ? 's' : ''}:\n${decl.examples.map((e) => `  ${e}`).join('\n')}`);
  return `${parts.join('\n\n')}\n`;
}

/** One value of an option or positional, typed; `label` names it in the error. */
function convert(raw, spec, label) {
  if (spec.list) return raw.split(',').map((s) => s.trim()).filter(Boolean).map((s) => convert(s, { ...spec, list: false }, label));
  let value = raw;
  const bad = (what) => new UsageError(`${label} takes ${what}, not ${JSON.stringify(raw)}`);
  if (spec.type === 'number' || spec.type === 'integer') {
    value = raw.trim() === '' ? NaN : Number(raw);
    if (!Number.isFinite(value)) throw bad(spec.type === 'integer' ? 'a whole number' : 'a number');
    if (spec.type === 'integer' && !Number.isInteger(value)) throw bad('a whole number');
    if (spec.min !== undefined && value < spec.min) throw bad(`a number ≥ ${spec.min}`);
    if (spec.above !== undefined && !(value > spec.above)) throw bad(`a number > ${spec.above}`);
  } else if (spec.type === 'json') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw bad('JSON');
    }
  }
  if (spec.choices && !spec.choices.includes(value)) throw bad(spec.choices.length === 2 ? spec.choices.join(' or ') : `one of ${spec.choices.join(', ')}`);
  const expected = spec.check?.(value);
  if (expected) throw bad(expected);
  return value;
}

/** parseArgs' own errors, as one line naming the option or argument. */
function explain(err, options) {
  const token = /'([^']*)'/.exec(err.message)?.[1]?.split(' ')[0] ?? '';
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${token}`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${token}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const key = token.replace(/^-+/, '');
      const spec = options[key] ?? Object.values(options).find((s) => s.short === key);
      if (spec?.type === 'boolean') return `${token} takes no value`;
      if (/ambiguous/.test(err.message)) return `${token} needs a value (for one that starts with '-', write ${token}=-VALUE)`;
      return `${token} needs a value`;
    }
    default:
      return err.message.split('\n')[0];
  }
}

function exitWith(name, message) {
  process.stderr.write(`${name}: ${message} (see --help)\n`);
  process.exit(2);
}

/**
 * Parses `argv` (the script's arguments) by the declaration; prints the help or a one-line error
 * and exits where that is the answer. Returns { opts, fail }: `fail(message)` reports a value the
 * script itself finds wrong the same way (one line, exit 2).
 */
function parseOptions(declaration, argv = process.argv.slice(2)) {
  const decl = { positionals: [], examples: [], ...declaration, options: { ...declaration.options, help: HELP } };
  const name = scriptName(decl.script);
  if (process.env.ERG_BENCH_OPTIONS === 'json') {
    process.stdout.write(`${JSON.stringify({ script: name, options: decl.options, positionals: decl.positionals })}\n`);
    process.exit(0);
  }
  const end = argv.indexOf('--');
  if ((end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h')) {
    process.stdout.write(usage(decl));
    process.exit(0);
  }
  const fail = (message) => exitWith(name, message);
  const parserOptions = {};
  for (const [key, spec] of Object.entries(decl.options)) {
    parserOptions[key] = { type: spec.type === 'boolean' ? 'boolean' : 'string', ...(spec.short ? { short: spec.short } : {}) };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: parserOptions, allowPositionals: decl.positionals.length > 0, strict: true });
  } catch (err) {
    if (!String(err.code).startsWith('ERR_PARSE_ARGS')) throw err;
    return fail(explain(err, decl.options));
  }
  try {
    const opts = {};
    const quick = parsed.values.quick === true;
    for (const [key, spec] of Object.entries(decl.options)) {
      const raw = parsed.values[key];
      if (raw !== undefined) opts[key] = spec.type === 'boolean' ? raw : convert(raw, spec, `--${key}`);
      else if (quick && spec.quick !== undefined) opts[key] = spec.quick;
      else opts[key] = spec.type === 'boolean' ? Boolean(spec.default) : spec.default;
    }
    const given = parsed.positionals;
    if (given.length > decl.positionals.length) throw new UsageError(`unexpected argument ${given[decl.positionals.length]}`);
    decl.positionals.forEach((spec, i) => {
      if (i < given.length) opts[spec.name] = convert(given[i], spec, spec.name);
      else if (spec.required) throw new UsageError(`missing argument <${spec.name}>`);
      else opts[spec.name] = quick && spec.quick !== undefined ? spec.quick : spec.default;
    });
    return { opts, fail };
  } catch (err) {
    if (err instanceof UsageError) return fail(err.message);
    throw err;
  }
}

module.exports = { parseOptions };
