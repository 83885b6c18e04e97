// erg clusters policy (issue 27 §4): shows which internal hosts a project's clusters may be; an
// admin's --allow / --disallow sends the list read, with those hosts added and removed.
import { erg, routes, type RecordedRequest } from './helpers';

const stored = (allowHosts: string[], project = 'default') => ({ status: 200, body: { project, allowHosts } });

describe('erg clusters policy (scripted API)', () => {
  test('shows the policy: public addresses only, or which internal hosts too', async () => {
    const none = await erg(['clusters', 'policy'], { api: routes({ 'GET /v1/projects/default/cluster-policy': stored([]) }) });
    expect(none).toMatchObject({ code: 0, stdout: 'Clusters of project default may be on public addresses only.\n' });
    const some = await erg(['clusters', 'policy', '--project', 'hpc'], { api: routes({ 'GET /v1/projects/hpc/cluster-policy': stored(['10.0.0.0/8', 'login.internal'], 'hpc') }) });
    expect(some.stdout).toBe('Clusters of project hpc may be on public addresses and on these internal hosts: 10.0.0.0/8, login.internal\n');
  });

  test('--allow adds to what is stored, --disallow removes (any case); the whole list is sent', async () => {
    const seen: RecordedRequest[] = [];
    const out = await erg(['clusters', 'policy', '--allow', '127.0.0.1', '--allow', 'ci.internal', '--disallow', 'OLD.internal'], {
      api: routes({
        'GET /v1/projects/default/cluster-policy': stored(['old.internal', 'ci.internal']),
        'PUT /v1/projects/default/cluster-policy': (req) => (seen.push(req), stored(JSON.parse(req.body).allowHosts)),
      }),
    });
    expect(out.code).toBe(0);
    expect(JSON.parse(seen[0]!.body)).toEqual({ allowHosts: ['ci.internal', '127.0.0.1'] });
    expect(out.stdout).toContain('internal hosts: ci.internal, 127.0.0.1');
  });

  test('an entry the API refuses names --allow; a non-admin is told to ask an admin, with the command', async () => {
    const refused = await erg(['clusters', 'policy', '--allow', '0.0.0.0/0'], {
      api: routes({
        'GET /v1/projects/default/cluster-policy': stored([]),
        'PUT /v1/projects/default/cluster-policy': {
          status: 400,
          body: { error: { code: 'ERG_VALIDATION', message: 'invalid cluster policy', issues: [{ path: 'allowHosts.0', code: 'invalid_value', message: '"0.0.0.0/0" is too wide' }] } },
        },
      }),
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('allowHosts.0: "0.0.0.0/0" is too wide (--allow)');
    const forbidden = await erg(['clusters', 'policy', '--allow', '10.0.0.1'], {
      api: routes({
        'GET /v1/projects/default/cluster-policy': stored([]),
        'PUT /v1/projects/default/cluster-policy': { status: 403, body: { error: { code: 'ERG_FORBIDDEN', message: 'this needs an admin token' } } },
      }),
    });
    expect(forbidden.code).toBe(2);
    expect(forbidden.stderr).toContain("only admins change a project's cluster policy");
    expect(forbidden.stderr).toContain('hint: ask an admin to run: erg clusters policy --project default --allow 10.0.0.1');
  });
});
