// docker-compose.yml describes the same stack as the local scripts. No Docker engine runs here,
// so this checks the file's structure against the repository, and runs `docker compose config`
// (or docker-compose) as well when a client is installed.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '@erg/testkit';

const root = repoRoot();
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
const services = compose.services as Record<string, any>;

test('the stack has postgres, redis, a slurm container, the api and the scheduler', () => {
  expect(Object.keys(services)).toEqual(expect.arrayContaining(['postgres', 'redis', 'slurm', 'api', 'scheduler']));
});

test('images are built from Dockerfiles that exist, and run entry points the build produces', () => {
  for (const [name, svc] of Object.entries(services)) {
    if (svc.build) expect([name, existsSync(path.join(root, svc.build.context ?? '.', svc.build.dockerfile))]).toEqual([name, true]);
  }
  for (const name of ['api', 'scheduler']) {
    const entry = services[name].command.find((c: string) => c.endsWith('.js')) as string;
    const source = entry.replace('/dist/', '/src/').replace(/\.js$/, '.ts');
    expect([name, existsSync(path.join(root, source))]).toEqual([name, true]);
  }
  expect(services.slurm.healthcheck.test.join(' ')).toContain('deploy/local-slurm/status.sh');
});

test('api and scheduler reach the postgres and redis services and wait for them', () => {
  for (const name of ['api', 'scheduler']) {
    const env = services[name].environment;
    expect(env.DATABASE_URL).toMatch(/@postgres:5432\//);
    expect(env.REDIS_URL).toMatch(/^redis:\/\/redis:6379/);
    expect(services[name].depends_on.postgres.condition).toBe('service_healthy');
    expect(services[name].depends_on.redis.condition).toBe('service_healthy');
  }
  expect(services.slurm.environment.ERG_LOCAL_SLURM_SSH_LISTEN).toBe('0.0.0.0');
});

test('a Docker Compose client, where installed, accepts the file', () => {
  const clients: [string, string[]][] = [['docker', ['compose', 'config', '-q']], ['docker-compose', ['config', '-q']]];
  const results = clients
    .map(([cmd, args]) => ({ cmd, r: spawnSync(cmd, args, { cwd: root, encoding: 'utf8' }) }))
    .filter(({ r }) => !r.error && !/is not a docker command|unknown (shorthand )?flag|not found/i.test(r.stderr ?? ''));
  for (const { cmd, r } of results) expect([cmd, r.status, r.stderr]).toEqual([cmd, 0, '']);
});
