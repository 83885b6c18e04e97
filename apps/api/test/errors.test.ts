import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ERROR_CATALOG, ErgError, type SpecIssue } from '@erg/spec';
import { SuiteError } from '@erg/suites';
import { sourceFiles } from '@erg/testkit';
import { ApiError, errors } from '../src/errors';

const SRC = join(__dirname, '../src');

const sources = (dir: string) => sourceFiles(dir, { match: /\.ts$/ });

const issue: SpecIssue = { path: 'port', code: 'too_big', message: 'must be at most 65535, got 70000' };

/** One of every answer `errors` makes. */
const ALL: ApiError[] = [
  errors.unauthorized(),
  errors.metricsUnauthorized(),
  errors.validation('request body', [issue]),
  errors.notFound('run', 'x'),
  errors.noRoute('GET', '/v1/nope'),
  errors.unknownCluster('ghost', ['local']),
  errors.unknownBaselineCampaign('c'),
  errors.suiteRefused(new SuiteError('ERG_SUITE_TEMPLATE_INVALID', 'suite "s" has a campaign template this erg no longer accepts: x')),
  errors.conflict('taken'),
  errors.forbidden('no'),
  errors.tokenWider([issue]),
  errors.notReady('later'),
  errors.rateLimited('mutations', 120, 17),
  errors.bodyTooLarge(1 << 20, 'POST /v1/campaigns'),
  errors.badUrl(true),
  errors.badUrl(false),
  errors.busy(),
  errors.tooCostly('campaign spec', 'took longer than 10 s to validate'),
  errors.databaseUnavailable(),
  errors.clusterUnavailable('local', 'ECONNREFUSED'),
  errors.logUnreadable('r', 'stdout.log is a FIFO'),
  errors.logReadsBusy('this token', 2),
  errors.internal(),
];

describe('the API errors', () => {
  it.each(ALL.map((e) => [e.code, e] as const))('%s has its status from the catalog, under both names', (code, err) => {
    const definition = ERROR_CATALOG[code];
    expect(err).toBeInstanceOf(ErgError);
    expect([definition.status, ...('alsoStatus' in definition ? definition.alsoStatus : [])]).toContain(err.status);
    expect(err.statusCode).toBe(err.status);
    expect(definition.surface).toBe('response');
  });

  it('answer with the same bodies as before', () => {
    expect(JSON.stringify(errors.unknownCluster('ghost', ['local']))).toBe(
      '{"error":{"code":"ERG_UNKNOWN_CLUSTER","message":"cluster \\"ghost\\" is not registered (registered: local); register it with POST /v1/clusters","issues":[{"path":"cluster","code":"unknown_cluster","message":"cluster \\"ghost\\" is not registered"}]}}',
    );
    expect(errors.unknownCluster('ghost', [], 'campaign.cluster').toJSON()).toEqual({
      error: {
        code: 'ERG_UNKNOWN_CLUSTER',
        message: 'cluster "ghost" is not registered; register it with POST /v1/clusters',
        issues: [{ path: 'campaign.cluster', code: 'unknown_cluster', message: 'cluster "ghost" is not registered' }],
      },
    });
    expect(JSON.stringify(errors.noRoute('GET', '/v1/nope'))).toBe('{"error":{"code":"ERG_NOT_FOUND","message":"no route GET /v1/nope"}}');
    expect(JSON.stringify(errors.internal())).toBe('{"error":{"code":"ERG_INTERNAL","message":"internal error; see the API log"}}');
    expect(errors.badUrl(true)).toMatchObject({ status: 414, message: 'a path segment of the URL is too long (ids and names are at most a few hundred characters)' });
    expect(errors.badUrl(false)).toMatchObject({ status: 400, message: 'the URL is not valid: check its percent-encoding' });
  });

  it("say a suite's refusal as before: 422, and where to register an unknown cluster", () => {
    const unknown = errors.suiteRefused(new SuiteError('ERG_SUITE_UNKNOWN_CLUSTER', 'suite "s" runs on cluster "c", which is not registered', { cluster: 'c' }));
    expect(unknown.toJSON()).toEqual({
      error: { code: 'ERG_SUITE_UNKNOWN_CLUSTER', message: 'suite "s" runs on cluster "c", which is not registered; register it with POST /v1/clusters or change the suite' },
    });
    expect(unknown.status).toBe(422);
    const missing = errors.suiteRefused(new SuiteError('ERG_SUITE_BASELINE_MISSING', 'suite "s" pins a baseline campaign that no longer exists'));
    expect(missing).toMatchObject({ status: 422, message: 'suite "s" pins a baseline campaign that no longer exists' });
    expect(errors.unknownBaselineCampaign('c').toJSON()).toEqual({
      error: {
        code: 'ERG_UNKNOWN_CAMPAIGN',
        message: 'baseline campaign "c" does not exist',
        issues: [{ path: 'baseline.campaignId', code: 'unknown_campaign', message: 'no campaign with this id' }],
      },
    });
  });

  it('are made only by the helpers of src/errors.ts', () => {
    const elsewhere = sources(SRC)
      .filter((file) => relative(SRC, file) !== 'errors.ts')
      .filter((file) => /new ApiError\b/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(elsewhere).toEqual([]);
  });
});
