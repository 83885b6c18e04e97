import { parseCampaignSpec, type SpecIssue } from '../src';

/** The smallest spec that validates; tests spread their one change over it. */
export const minimal = { name: 'study', cluster: 'local', run: 'srun ./bench' } as const;

/** Parses `input` and returns its issues, failing the test when it validates. */
export function issuesOf(input: unknown): SpecIssue[] {
  const result = parseCampaignSpec(input);
  if (result.ok) throw new Error(`expected issues, but the spec validated: ${JSON.stringify(result.spec)}`);
  return result.issues;
}

/** The one issue at `path`, failing with the full list when there is not exactly one. */
export function issueAt(issues: SpecIssue[], path: string): SpecIssue {
  const found = issues.filter((issue) => issue.path === path);
  if (found.length !== 1) {
    throw new Error(`expected one issue at ${path}, found ${found.length} in:\n${issues.map((i) => `${i.path}: ${i.message}`).join('\n')}`);
  }
  return found[0] as SpecIssue;
}

/** Parses `input`, failing the test with every issue when it does not validate. */
export function specOf(input: unknown) {
  const result = parseCampaignSpec(input);
  if (!result.ok) throw new Error(`expected a valid spec:\n${result.issues.map((i) => `${i.path}: ${i.message}`).join('\n')}`);
  return result.spec;
}
