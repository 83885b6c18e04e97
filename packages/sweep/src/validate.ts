import { decodeCampaignText, expandPower, isTemplatedOption, MAX_REPORTED_ISSUES, nodesIssue, parseCampaignSpec, slurmOptionIssues, type CampaignSpec, type SpecFormat, type SpecIssue } from '@erg/spec';
import { measureCampaign, type SizeLimits } from './campaign-size';
import { configurationsOf, type Configuration } from './expand';
import { SpaceIndex } from './space-index';

export type ValidateCampaignResult =
  | { ok: true; spec: CampaignSpec; configurations: Configuration[] }
  | { ok: false; issues: SpecIssue[] };

/**
 * Everything that decides whether a campaign may be created, in one place so that the API and
 * the CLI give the same verdict: the spec's own rules, the size limit, and that at least one
 * configuration survives the excludes. Returns the expanded configurations on success.
 * Every step is bounded: the spec's sizes by its schema, counting by a step budget, and
 * expansion by the count (it runs only once the count is within the limit).
 */
export function validateCampaign(input: unknown, limits: SizeLimits): ValidateCampaignResult {
  const parsed = parseCampaignSpec(input);
  if (!parsed.ok) return parsed;
  const { spec } = parsed;
  const index = new SpaceIndex(spec, limits.maxCountSteps);
  const size = measureCampaign(spec, limits, index);
  if (!size.ok) return size;
  if (size.configurations === 0) {
    return {
      ok: false,
      issues: [{ path: 'exclude', code: 'nothing_to_run', message: 'the excludes remove every configuration; nothing would run' }],
    };
  }
  const budget = budgetIssues(spec, size.configurations);
  if (budget.length > 0) return { ok: false, issues: budget };
  const configurations = configurationsOf(index);
  const optionIssues = [...templatedOptionIssues(spec, configurations), ...powerIssues(spec, configurations), ...nodeCountIssues(spec, configurations)].slice(0, MAX_REPORTED_ISSUES);
  if (optionIssues.length > 0) return { ok: false, issues: optionIssues };
  return { ok: true, spec, configurations };
}

/** An adaptive campaign's run budget must pay for every configuration's first runs. */
function budgetIssues(spec: CampaignSpec, configurations: number): SpecIssue[] {
  const s = spec.strategy;
  if (s.kind !== 'adaptive' || s.budget?.maxRuns === undefined) return [];
  const first = configurations * s.minRepetitions;
  if (s.budget.maxRuns >= first) return [];
  return [{
    path: 'strategy.budget.maxRuns', code: 'budget_too_small',
    message: `${s.budget.maxRuns} runs cannot pay for the first runs: ${configurations} configuration(s) × strategy.minRepetitions ${s.minRepetitions} = ${first}; raise it to at least ${first} or remove configurations`,
  }];
}

/**
 * The power state of every configuration (templates expanded, each value a whole number in its
 * knob's range, locked clocks min ≤ max), so that a value that cannot be applied is a 400 naming
 * the configuration and the field. What the nodes support is the node helper's to check.
 */
function powerIssues(spec: CampaignSpec, configurations: readonly Configuration[]): SpecIssue[] {
  if (!spec.power) return [];
  const issues: SpecIssue[] = [];
  for (const c of configurations) {
    for (const issue of expandPower(spec.power, c.key, c.parameters).issues) {
      issues.push({ ...issue, code: 'invalid_power_value' });
      if (issues.length >= MAX_REPORTED_ISSUES) return issues;
    }
  }
  return issues;
}

/** resources.nodes from a parameter: every configuration's value a whole number of nodes, or a 400 naming the configuration. */
function nodeCountIssues(spec: CampaignSpec, configurations: readonly Configuration[]): SpecIssue[] {
  if (typeof spec.resources.nodes === 'number') return [];
  const issues: SpecIssue[] = [];
  for (const c of configurations) {
    const issue = nodesIssue(spec.resources, c.key, c.parameters);
    if (issue) issues.push({ ...issue, code: 'invalid_node_count' });
    if (issues.length >= MAX_REPORTED_ISSUES) break;
  }
  return issues;
}

/**
 * Slurm options with {{parameter}} placeholders (the power knobs a study sweeps: gpuFreq,
 * cpuFreq), expanded for every configuration and checked as a plain value would be, so that a
 * value Slurm would refuse is a 400 naming the configuration and the field, not a failed job.
 * Costs configurations × templated options, both already bounded by the size limit.
 */
function templatedOptionIssues(spec: CampaignSpec, configurations: readonly Configuration[]): SpecIssue[] {
  if (!spec.slurm || !Object.values(spec.slurm).some(isTemplatedOption)) return [];
  const issues: SpecIssue[] = [];
  for (const c of configurations) {
    for (const issue of slurmOptionIssues(spec.slurm, c.key, c.parameters)) {
      issues.push({ ...issue, code: 'invalid_slurm_option' });
      if (issues.length >= MAX_REPORTED_ISSUES) return issues;
    }
  }
  return issues;
}

/** validateCampaign for a spec still in YAML or JSON text; syntax errors come back as issues too. */
export function validateCampaignText(text: string, format: SpecFormat, limits: SizeLimits): ValidateCampaignResult {
  const decoded = decodeCampaignText(text, format);
  return decoded.ok ? validateCampaign(decoded.raw, limits) : decoded;
}
