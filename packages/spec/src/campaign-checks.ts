import type { CampaignSpec } from './campaign';
import type { IssueCode } from './issues';
import { canonicalValue, type ParamValue } from './param-value';
import { powerTemplates } from './power';
import { TEMPLATE_BUILTINS, scanTemplate } from './template';

/**
 * Rules that relate fields to each other. They run on a SpecView rather than on a parsed spec so
 * that a spec with a broken field still gets these checks on the parts that did validate: the
 * author sees every problem in one round trip instead of fixing them one at a time.
 *
 * In a SpecView `undefined` means "present but invalid (already reported), so skip the checks
 * that depend on it".
 */
type Axis = CampaignSpec['parameters'][string];
type ExcludeValue = CampaignSpec['exclude'][number][string];
export interface SpecView {
  execution: CampaignSpec['execution'] | undefined;
  /** Whether the author wrote these fields at all, valid or not. */
  given: { cluster: boolean; run: boolean };
  parameters: Readonly<Record<string, Axis | undefined>> | undefined;
  zip: ReadonlyArray<Readonly<Record<string, Axis | undefined>> | undefined> | undefined;
  exclude: ReadonlyArray<Readonly<Record<string, ExcludeValue | undefined>> | undefined> | undefined;
  run: string | undefined;
  files: Readonly<Record<string, string | undefined>> | undefined;
  /** Templated sbatch option values (`gpuFreq: "{{clock}}"`), by option name. */
  slurmTemplates: Readonly<Record<string, string>> | undefined;
  /** Templated power values (`gpuPowerLimitW: "{{cap}}"`), by their path under `power` (`gpuLockedClocksMHz[1]`). */
  powerTemplates: Readonly<Record<string, string>> | undefined;
  repetitions: number | undefined;
  strategy: CampaignSpec['strategy'] | undefined;
  /** design.nodes: the nodes to balance runs over, where given and valid. */
  designNodes: readonly string[] | undefined;
  /** resources.nodes: how many nodes each run asks for. */
  nodesPerRun: number | string | undefined;
}

/**
 * Most issues one report lists (parse.ts caps the report): enough to fix a spec in a few rounds,
 * never a report larger than the spec. The checks that scale with the number of values stop
 * collecting past it, so a spec with 40,000 wrong values costs no more than one with 101.
 */
export const MAX_REPORTED_ISSUES = 100;

export interface CheckIssue {
  path: PropertyKey[];
  message: string;
  code: IssueCode;
}

export function viewOfSpec(spec: CampaignSpec): SpecView {
  return {
    execution: spec.execution,
    given: { cluster: spec.cluster !== undefined, run: spec.run !== undefined },
    parameters: spec.parameters,
    zip: spec.zip,
    exclude: spec.exclude,
    run: spec.run,
    files: spec.files,
    slurmTemplates: templatedOptions(spec.slurm),
    powerTemplates: powerTemplates(spec.power),
    repetitions: spec.repetitions,
    strategy: spec.strategy,
    designNodes: spec.design.nodes,
    nodesPerRun: spec.resources.nodes,
  };
}

/** The sbatch options whose values hold {{placeholders}}. */
export function templatedOptions(slurm: unknown): Record<string, string> | undefined {
  if (typeof slurm !== 'object' || slurm === null) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(slurm)) if (typeof value === 'string' && value.includes('{{')) out[key] = value;
  return out;
}

function showValue(value: ParamValue): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** The first values of an axis for a message; a 1,000-value axis must not make every message 1,000 values long. */
function someValues(axis: readonly ParamValue[], shown = 20): string {
  const head = axis.slice(0, shown).map(showValue).join(', ');
  return axis.length > shown ? `${head}, … ${axis.length - shown} more` : head;
}

function listOrNone(names: readonly string[], shown = 20): string {
  if (names.length === 0) return '(none)';
  // 64 zip groups of 64 names are 4,096 names: every "not a parameter" message must not list them all.
  return names.length > shown ? `${names.slice(0, shown).join(', ')}, … ${names.length - shown} more` : names.join(', ');
}

interface Definitions {
  /** Every parameter name, grid first, then zip groups, each once. */
  names: string[];
  /** False when a broken field hides some names: then "not a parameter" cannot be claimed. */
  complete: boolean;
  /** The values of each parameter, where they validated. */
  axes: Map<string, Axis | undefined>;
}

function definitions(view: SpecView): Definitions {
  const axes = new Map<string, Axis | undefined>();
  for (const [name, axis] of Object.entries(view.parameters ?? {})) axes.set(name, axis);
  for (const group of view.zip ?? []) {
    for (const [name, axis] of Object.entries(group ?? {})) if (!axes.has(name)) axes.set(name, axis);
  }
  const complete = view.parameters !== undefined && view.zip !== undefined && view.zip.every((g) => g !== undefined);
  return { names: [...axes.keys()], complete, axes };
}

/** Every cross-field problem in `view`, none skipped because another was found. */
export function crossFieldIssues(view: SpecView): CheckIssue[] {
  const defs = definitions(view);
  return [
    ...requiredForSlurm(view),
    ...builtinNames(view),
    ...redefinitions(view),
    ...zipLengths(view),
    ...duplicateValues(view),
    ...excludeIssues(view, defs),
    ...templateIssues(view, defs),
    ...strategyIssues(view),
    ...designIssues(view),
  ];
}

/**
 * Node balance pins each run to one node (#SBATCH --nodelist, run-order.ts's Latin square): a run
 * that asks for several nodes cannot be pinned to one, and an import's runs are never submitted.
 */
function designIssues(view: SpecView): CheckIssue[] {
  const nodes = view.designNodes;
  if (nodes === undefined) return [];
  const issues: CheckIssue[] = [];
  if (view.nodesPerRun !== undefined && view.nodesPerRun !== 1) {
    issues.push({
      path: ['design', 'nodes'], code: 'design_conflict',
      message: `node balance pins each run to one of the ${nodes.length} nodes listed, but each run asks for resources.nodes: ${view.nodesPerRun}; set resources.nodes to 1, or remove design.nodes and let Slurm place the runs`,
    });
  }
  if (view.execution === 'import') {
    issues.push({
      path: ['design', 'nodes'], code: 'design_conflict',
      message: "node balance pins the runs' Slurm jobs to nodes, and an import's runs are measured elsewhere: remove design.nodes, or use execution: slurm",
    });
  }
  return issues;
}

/**
 * An adaptive campaign decides its repetitions itself (strategy.ts): the grid's `repetitions`
 * would say something else; its maximum cannot be below its minimum; and erg must submit its
 * runs to add any (an import's runs are measured elsewhere). A budget too small for the first
 * runs is judged where the configurations are counted (@erg/sweep's validateCampaign).
 */
function strategyIssues(view: SpecView): CheckIssue[] {
  const s = view.strategy;
  if (s?.kind === 'search') return searchIssues(view, s);
  if (s?.kind !== 'adaptive') return [];
  const issues: CheckIssue[] = [];
  if (view.repetitions !== undefined && view.repetitions !== 1) {
    issues.push({
      path: ['repetitions'], code: 'strategy_conflict',
      message: `an adaptive campaign decides its repetitions as results land: remove repetitions (${view.repetitions}) and set strategy.minRepetitions (first runs, ${s.minRepetitions}) and strategy.maxRepetitions (at most, ${s.maxRepetitions})`,
    });
  }
  if (s.maxRepetitions < s.minRepetitions) {
    issues.push({ path: ['strategy', 'maxRepetitions'], code: 'strategy_conflict', message: `must be at least strategy.minRepetitions (${s.minRepetitions}), got ${s.maxRepetitions}` });
  }
  if (view.execution === 'import') {
    issues.push({ path: ['strategy'], code: 'strategy_conflict', message: 'an adaptive campaign needs execution: slurm: erg adds its runs as results land, and an import\'s runs are measured elsewhere' });
  }
  return issues;
}

/** A search runs each configuration it tries `strategy.repetitions` times, and erg must submit them. */
function searchIssues(view: SpecView, s: Extract<NonNullable<SpecView['strategy']>, { kind: 'search' }>): CheckIssue[] {
  const issues: CheckIssue[] = [];
  if (view.repetitions !== undefined && view.repetitions !== 1) {
    issues.push({
      path: ['repetitions'], code: 'strategy_conflict',
      message: `a search runs each configuration it tries strategy.repetitions times (${s.repetitions}): remove repetitions (${view.repetitions}) and set strategy.repetitions`,
    });
  }
  if (s.budget.maxRuns < s.repetitions) {
    issues.push({
      path: ['strategy', 'budget', 'maxRuns'], code: 'budget_too_small',
      message: `${s.budget.maxRuns} runs cannot pay for one configuration's strategy.repetitions (${s.repetitions}); raise it to at least ${s.repetitions}`,
    });
  }
  if (view.execution === 'import') {
    issues.push({ path: ['strategy'], code: 'strategy_conflict', message: "a search needs execution: slurm: erg submits the configurations it proposes, and an import's runs are measured elsewhere" });
  }
  return issues;
}

function requiredForSlurm(view: SpecView): CheckIssue[] {
  if (view.execution !== 'slurm') return [];
  const issues: CheckIssue[] = [];
  if (!view.given.cluster) {
    issues.push({ path: ['cluster'], code: 'required', message: 'required when execution is "slurm": the cluster to submit to' });
  }
  if (!view.given.run) {
    issues.push({ path: ['run'], code: 'required', message: 'required when execution is "slurm": the shell code each run executes' });
  }
  return issues;
}

const BUILTINS: readonly string[] = TEMPLATE_BUILTINS;

function builtinNames(view: SpecView): CheckIssue[] {
  const issues: CheckIssue[] = [];
  const refuse = (path: PropertyKey[], name: string) =>
    issues.push({
      path,
      code: 'reserved_name',
      message: `"${name}" is a built-in template name (${BUILTINS.join(', ')}); give the parameter another name`,
    });
  for (const name of Object.keys(view.parameters ?? {})) if (BUILTINS.includes(name)) refuse(['parameters', name], name);
  view.zip?.forEach((group, i) => {
    for (const name of Object.keys(group ?? {})) if (BUILTINS.includes(name)) refuse(['zip', i, name], name);
  });
  return issues;
}

function redefinitions(view: SpecView): CheckIssue[] {
  const issues: CheckIssue[] = [];
  const firstZip = new Map<string, number>();
  view.zip?.forEach((group, i) => {
    for (const name of Object.keys(group ?? {})) {
      const inGrid = view.parameters !== undefined && Object.hasOwn(view.parameters, name);
      const earlierGroup = firstZip.get(name);
      const where = inGrid ? 'parameters' : earlierGroup !== undefined ? `zip[${earlierGroup}]` : undefined;
      if (where) {
        issues.push({
          path: ['zip', i, name],
          code: 'parameter_redefined',
          message: `"${name}" is already defined in ${where}; a parameter belongs to exactly one axis`,
        });
      } else firstZip.set(name, i);
    }
  });
  return issues;
}

/** The lists of a group, when all of them validated. */
function validLists(group: Readonly<Record<string, Axis | undefined>> | undefined): Array<[string, Axis]> | undefined {
  if (!group) return undefined;
  const lists = Object.entries(group);
  return lists.every((entry): entry is [string, Axis] => entry[1] !== undefined) ? lists : undefined;
}

function zipLengths(view: SpecView): CheckIssue[] {
  const issues: CheckIssue[] = [];
  view.zip?.forEach((group, i) => {
    const lists = validLists(group);
    if (!lists || new Set(lists.map(([, values]) => values.length)).size <= 1) return;
    issues.push({
      path: ['zip', i],
      code: 'zip_length_mismatch',
      message: `the lists of a zip group move together, so they need the same length; got ${lists
        .map(([name, values]) => `${name}: ${values.length}`)
        .join(', ')}`,
    });
  });
  return issues;
}

function duplicateValues(view: SpecView): CheckIssue[] {
  const issues: CheckIssue[] = [];
  for (const [name, axis] of Object.entries(view.parameters ?? {})) {
    const seen = new Map<string, number>();
    axis?.forEach((value, j) => {
      const key = canonicalValue(value);
      const first = seen.get(key);
      if (first === undefined) seen.set(key, j);
      else if (issues.length <= MAX_REPORTED_ISSUES) {
        issues.push({
          path: ['parameters', name, j],
          code: 'duplicate_value',
          message: `value ${showValue(value)} duplicates parameters.${name}[${first}]; values are compared as text, so 1, 1.0 and "1" are the same`,
        });
      }
    });
  }
  view.zip?.forEach((group, i) => {
    const lists = validLists(group);
    if (!lists || new Set(lists.map(([, values]) => values.length)).size > 1) return;
    const seen = new Map<string, number>();
    const length = lists[0]?.[1].length ?? 0;
    for (let j = 0; j < length; j += 1) {
      const tuple = lists.map(([name, values]) => `${name}=${canonicalValue(values[j] as ParamValue)}`).join(', ');
      const first = seen.get(tuple);
      if (first === undefined) seen.set(tuple, j);
      else {
        issues.push({
          path: ['zip', i],
          code: 'duplicate_value',
          message: `position ${j} (${tuple}) duplicates position ${first}; each position of a zip group must be a different combination`,
        });
      }
    }
  });
  return issues;
}

function excludeIssues(view: SpecView, defs: Definitions): CheckIssue[] {
  const issues: CheckIssue[] = [];
  // One set of canonical values per parameter, built once: not once per exclude entry, which
  // made 1,000 entries over 1,000-value axes cost a million insertions.
  const allowedOf = new Map<string, ReadonlySet<string>>();
  const allowedValues = (name: string, axis: Axis): ReadonlySet<string> => {
    let allowed = allowedOf.get(name);
    if (!allowed) {
      allowed = new Set(axis.map(canonicalValue));
      allowedOf.set(name, allowed);
    }
    return allowed;
  };
  view.exclude?.forEach((entry, i) => {
    if (issues.length > MAX_REPORTED_ISSUES) return;
    for (const [name, given] of Object.entries(entry ?? {})) {
      if (!defs.axes.has(name)) {
        if (defs.complete) {
          issues.push({
            path: ['exclude', i, name],
            code: 'unknown_parameter',
            message: `"${name}" is not a parameter; defined: ${listOrNone(defs.names)}`,
          });
        }
        continue;
      }
      const axis = defs.axes.get(name);
      if (!axis || given === undefined) continue;
      const allowed = allowedValues(name, axis);
      const check = (value: ParamValue, path: PropertyKey[]) => {
        if (allowed.has(canonicalValue(value))) return;
        issues.push({
          path,
          code: 'exclude_never_matches',
          message: `value ${showValue(value)} is not one of the values of ${name} (${someValues(axis)}), so this exclude can never match`,
        });
      };
      if (Array.isArray(given)) given.forEach((value, k) => check(value, ['exclude', i, name, k]));
      else check(given as ParamValue, ['exclude', i, name]);
    }
  });
  return issues;
}

function templateIssues(view: SpecView, defs: Definitions): CheckIssue[] {
  const issues: CheckIssue[] = [];
  const withBuiltins = new Set([...defs.names, ...BUILTINS]);
  const parametersOnly = new Set(defs.names);
  /** Syntax problems (unless the field's own schema reports them) and each placeholder that names nothing `known`, once. */
  const check = (text: string | undefined, path: PropertyKey[], known: ReadonlySet<string>, unknown: (name: string) => string, syntax = true) => {
    if (text === undefined) return;
    const { segments, problems } = scanTemplate(text);
    if (syntax) for (const problem of problems) issues.push({ path, code: 'template_syntax', message: problem.message });
    if (!defs.complete) return;
    const reported = new Set<string>();
    for (const s of segments) {
      if (typeof s === 'string' || known.has(s.name) || reported.has(s.name)) continue;
      reported.add(s.name);
      issues.push({ path, code: 'unknown_placeholder', message: unknown(s.name) });
    }
  };
  const scriptMessage = (name: string) => `template uses {{${name}}}, which is not a parameter; defined: ${listOrNone(defs.names)}; built-ins: ${BUILTINS.join(', ')}`;
  check(view.run, ['run'], withBuiltins, scriptMessage);
  for (const [name, text] of Object.entries(view.files ?? {})) check(text, ['files', name], withBuiltins, scriptMessage);
  // sbatch options are the same for every run of a configuration: parameters only, no built-ins.
  // Their syntax is the option schema's to report (TEMPLATED_VALUE).
  const optionMessage = (name: string) => `uses {{${name}}}, which is not a parameter; sbatch options take parameters only (defined: ${listOrNone(defs.names)})`;
  for (const [key, text] of Object.entries(view.slurmTemplates ?? {})) check(text, ['slurm', key], parametersOnly, optionMessage, false);
  // Power values too: the same for every run of a configuration, and their syntax is PowerBlock's.
  const powerMessage = (name: string) => `uses {{${name}}}, which is not a parameter; power values take parameters only (defined: ${listOrNone(defs.names)})`;
  for (const [key, text] of Object.entries(view.powerTemplates ?? {})) {
    const m = /^(\w+)(?:\[(\d)\])?$/.exec(key)!;
    check(text, m[2] === undefined ? ['power', m[1]!] : ['power', m[1]!, Number(m[2])], parametersOnly, powerMessage, false);
  }
  return issues;
}
