import { decodeCampaignText, parseWithIssues, ROOT_PATH, SuiteFields, type CampaignSpec, type SpecFormat, type SpecIssue } from '@erg/spec';
import { validateCampaign, type SizeLimits } from '@erg/sweep';
import { cronIssue, isTimeZone } from './cron';
import { cutSecretFromYaml } from './secret-text';
import { CREDENTIALS_MESSAGE, hasCredentials } from './webhook-policy';

// The CLI imports this module alone (@erg/suites/validate): it must not pull in the database.
export { cronIssue, isTimeZone, nextRunAt } from './cron';

export interface ValidSuite {
  fields: SuiteFields;
  /** The template as validated, defaults applied. */
  spec: CampaignSpec;
  /** Configurations × repetitions each run of the suite submits. */
  runs: number;
  /**
   * A suite written as YAML: its text with the webhook secret cut out of the document (in any
   * form it was written), done here so that it happens wherever the text is parsed — in the
   * API's worker thread for large bodies.
   */
  textWithoutSecret?: string;
}

export type ValidateSuiteResult = { ok: true; suite: ValidSuite } | { ok: false; issues: SpecIssue[] };

function prefixed(prefix: string, issues: readonly SpecIssue[]): SpecIssue[] {
  return issues.map((i) => ({ ...i, path: i.path === ROOT_PATH ? prefix : `${prefix}.${i.path}` }));
}

/**
 * Everything that decides whether a suite may be stored, every problem at once: its own fields,
 * its campaign template (the same rules and size limits as POST /v1/campaigns, paths under
 * `campaign.`), that the template runs on a cluster, and that its schedule can be computed.
 */
export function validateSuite(input: unknown, limits: SizeLimits): ValidateSuiteResult {
  const issues: SpecIssue[] = [];
  const fields = parseWithIssues(SuiteFields, input);
  if (!fields.ok) issues.push(...fields.issues);
  const raw = typeof input === 'object' && input !== null ? (input as Record<string, unknown>)['campaign'] : undefined;
  let spec: CampaignSpec | undefined;
  let runs = 0;
  if (raw === undefined) {
    // In place of zod's bare "required" for this key: say what belongs there.
    const i = issues.findIndex((x) => x.path === 'campaign');
    if (i >= 0) issues.splice(i, 1);
    issues.push({ path: 'campaign', code: 'required', message: 'required: the campaign spec every run of the suite submits' });
  } else {
    // A sequential suite runs minRepetitions to maxRepetitions per configuration: the template's
    // repetitions is that maximum (also for the size limit), written as such or left out.
    const sequential = fields.ok ? fields.data.regression.sequential : undefined;
    const given = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)['repetitions'] : undefined;
    if (sequential && given !== undefined && given !== sequential.maxRepetitions) {
      issues.push({
        path: 'campaign.repetitions', code: 'invalid_value',
        message: `a sequential suite runs regression.minRepetitions to regression.sequential.maxRepetitions (${sequential.maxRepetitions}) repetitions per configuration: set repetitions to ${sequential.maxRepetitions} or leave it out`,
      });
    }
    const campaign = validateCampaign(sequential && given === undefined && typeof raw === 'object' && raw !== null ? { ...raw, repetitions: sequential.maxRepetitions } : raw, limits);
    if (campaign.ok) {
      spec = campaign.spec;
      runs = campaign.configurations.length * campaign.spec.repetitions;
      if (spec.execution !== 'slurm') {
        issues.push({ path: 'campaign.execution', code: 'invalid_value', message: 'a suite submits its campaign to a cluster: use execution: slurm' });
      }
      // A verdict compares repetitions with the baseline's; suites that add repetitions while the
      // verdict is undecided do it through regression.sequential, not the campaign's strategy.
      if (spec.strategy.kind !== 'grid') {
        issues.push({ path: 'campaign.strategy', code: 'strategy_conflict', message: "a suite's campaign runs the grid (its verdict compares repetitions with the baseline's): remove strategy; to add repetitions only while the verdict is undecided, set regression.sequential" });
      }
    } else {
      issues.push(...prefixed('campaign', campaign.issues));
    }
  }
  if (fields.ok && fields.data.schedule) {
    const { cron, timezone } = fields.data.schedule;
    if (!isTimeZone(timezone)) {
      issues.push({ path: 'schedule.timezone', code: 'invalid_value', message: `unknown time zone ${JSON.stringify(timezone)}; use an IANA name such as UTC or Europe/Berlin` });
    } else {
      const problem = cronIssue(cron, timezone);
      if (problem) issues.push({ path: 'schedule.cron', code: 'invalid_value', message: problem });
    }
  }
  // Whether http or an address is allowed depends on the project's webhook policy (the API checks
  // those); credentials in the URL are refused everywhere, also by `erg validate`.
  if (fields.ok && fields.data.webhook && hasCredentials(new URL(fields.data.webhook.url))) {
    issues.push({ path: 'webhook.url', code: 'invalid_value', message: CREDENTIALS_MESSAGE });
  }
  if (issues.length > 0 || !fields.ok || !spec) return { ok: false, issues };
  return { ok: true, suite: { fields: fields.data, spec, runs } };
}

/** validateSuite for a suite written as YAML or JSON text. */
export function validateSuiteText(text: string, format: SpecFormat, limits: SizeLimits): ValidateSuiteResult {
  const decoded = decodeCampaignText(text, format);
  if (!decoded.ok) return decoded;
  const result = validateSuite(decoded.raw, limits);
  if (!result.ok || format !== 'yaml') return result;
  const secret = result.suite.fields.webhook?.secret;
  return { ok: true, suite: { ...result.suite, textWithoutSecret: secret ? cutSecretFromYaml(text, secret) : text } };
}
