// docker-compose.yml describes the same stack as the local scripts. No Docker engine runs here,
// so this checks the file's structure against the repository, runs `docker compose config` (or
// docker-compose) as well when a client is installed, and runs the API proxy's nginx
// configuration under a local nginx, when one is installed, against stand-in API replicas.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { closedPort, repoRoot, waitFor } from '@erg/testkit';

const root = repoRoot();
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
const services = compose.services as Record<string, any>;

/** The host path of the proxy's nginx.conf, from the proxy service's bind mount. */
function proxyConfigPath(): string {
  const mount = (services.proxy.volumes as string[]).find((v) => v.endsWith(':/etc/nginx/nginx.conf:ro'));
  if (!mount) throw new Error('the proxy service mounts no nginx.conf');
  return path.join(root, mount.split(':')[0]!);
}

/** The proxy's nginx.conf without its comments, for checks of its directives. */
function proxyDirectives(): string {
  return readFileSync(proxyConfigPath(), 'utf8').replace(/#.*$/gm, '');
}

/** The text of one `location … { … }` block of nginx.conf (blocks there hold no nested braces). */
function locationBlock(conf: string, match: string): string {
  const start = conf.indexOf(`location ${match} {`);
  if (start < 0) throw new Error(`nginx.conf has no "location ${match}"`);
  return conf.slice(start, conf.indexOf('}', start));
}

/** nginx time ("90s", "1h", "2m", "120") in seconds. */
function seconds(value: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(value);
  if (!m) throw new Error(`not an nginx time: ${value}`);
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 }[m[2] ?? 's']!;
}

test('the stack has postgres, redis, a slurm container, the api, its proxy and the scheduler', () => {
  expect(Object.keys(services)).toEqual(expect.arrayContaining(['postgres', 'redis', 'slurm', 'api', 'proxy', 'scheduler']));
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

describe('scaling: `docker compose up --scale api=N --scale scheduler=M` behind one port', () => {
  test('api and scheduler publish no host port and have no fixed container name, so any number of each can run', () => {
    for (const name of ['api', 'scheduler']) {
      const svc = services[name];
      expect([name, svc.ports, svc.container_name, svc.hostname]).toEqual([name, undefined, undefined, undefined]);
    }
  });

  test('the number of replicas of each comes from the environment (.env), so a plain `up` keeps it', () => {
    expect(services.api.scale).toBe('${ERG_API_REPLICAS:-1}');
    expect(services.scheduler.scale).toBe('${ERG_SCHEDULER_REPLICAS:-1}');
  });

  test('every replica gets the same environment: one Postgres, one Redis, one secret key', () => {
    expect(services.api.environment.DATABASE_URL).toBe(services.scheduler.environment.DATABASE_URL);
    expect(services.api.environment.REDIS_URL).toBe(services.scheduler.environment.REDIS_URL);
    expect(services.api.environment.ERG_SECRET_KEY).toBe(services.scheduler.environment.ERG_SECRET_KEY);
    expect(services.api.environment.ERG_QUEUE_PREFIX).toBe(services.scheduler.environment.ERG_QUEUE_PREFIX);
  });

  test('the proxy publishes ERG_API_PUBLISH, on the port nginx listens on, and waits for a healthy api', () => {
    const proxy = services.proxy;
    expect(proxy.image).toMatch(/^nginx:/);
    expect(proxy.ports).toEqual(['${ERG_API_PUBLISH:-127.0.0.1:8080}:8080']);
    expect(proxyDirectives()).toMatch(/^\s*listen 8080;/m);
    expect(proxy.depends_on.api.condition).toBe('service_healthy');
    expect(proxy.healthcheck.test.join(' ')).toContain('http://127.0.0.1:8080/healthz');
    expect(services.api.healthcheck.test.join(' ')).toContain('/readyz');
  });

  test('the proxy config forwards to api:8080, the port the API listens on, resolving the name through Docker DNS at request time', () => {
    const conf = proxyDirectives();
    expect(`api:${services.api.environment.ERG_API_PORT}`).toBe('api:8080');
    expect(conf).toMatch(/^\s*set \$erg_api api:8080;/m);
    // A literal host in proxy_pass is resolved once, at start-up: replicas added later would never get traffic.
    expect(conf.match(/proxy_pass [^;]+;/g)).toEqual(['proxy_pass http://$erg_api;', 'proxy_pass http://$erg_api;']);
    expect(conf).toMatch(/^\s*resolver 127\.0\.0\.11 valid=\d+s/m);
    expect(conf).toMatch(/^\s*proxy_next_upstream error timeout;/m);
  });

  test('the proxy passes GET /v1/events through unbuffered, uncompressed, with read timeouts far above the 15 s keepalive', () => {
    const events = locationBlock(proxyDirectives(), '= /v1/events');
    expect(events).toContain('proxy_pass http://$erg_api;');
    expect(events).toMatch(/proxy_buffering off;/);
    expect(events).toMatch(/proxy_cache off;/);
    expect(events).toMatch(/gzip off;/);
    for (const directive of ['proxy_read_timeout', 'proxy_send_timeout']) {
      const value = new RegExp(`${directive} (\\w+);`).exec(events)?.[1];
      expect([directive, value && seconds(value) >= 3600]).toEqual([directive, true]);
    }
  });

  test("the scheduler's metrics port is open to the Compose network only", () => {
    expect(services.scheduler.environment.ERG_METRICS_HOST).toBe('0.0.0.0');
    expect(services.scheduler.expose).toEqual([services.scheduler.environment.ERG_METRICS_PORT]);
    expect(services.scheduler.ports).toBeUndefined();
  });

  test("each scheduler replica's health check asks its own readiness, on its metrics port", () => {
    expect(services.scheduler.healthcheck.test.join(' ')).toContain(`http://127.0.0.1:${services.scheduler.environment.ERG_METRICS_PORT}/readyz`);
  });
});

test('a Docker Compose client, where installed, accepts the file, with and without the bootstrap profile', () => {
  const clients: [string, string[]][] = [['docker', ['compose']], ['docker-compose', []]];
  const runs = clients.flatMap(([cmd, pre]) => [
    { cmd, args: [...pre, 'config', '-q'] },
    { cmd, args: [...pre, '--profile', 'bootstrap', 'config', '-q'] },
  ]);
  const results = runs
    .map(({ cmd, args }) => ({ what: `${cmd} ${args.join(' ')}`, r: spawnSync(cmd, args, { cwd: root, encoding: 'utf8' }) }))
    .filter(({ r }) => !r.error && !/is not a docker command|unknown (shorthand )?flag|unknown command|not found/i.test(r.stderr ?? ''));
  for (const { what, r } of results) expect([what, r.status, r.stderr]).toEqual([what, 0, '']);
});

// The proxy's nginx.conf under a real nginx: Docker's DNS server is played by a small DNS
// responder on loopback that answers `api` with the addresses of stand-in API replicas (HTTP
// servers on 127.0.0.2, 127.0.0.3, … sharing one port, as replicas share 8080). Only the listen
// address, the resolver's address and the upstream port are changed in the copy nginx runs.
// scripts/test.sh installs Debian's nginx-light; a missing nginx fails here rather than skipping.
const hasNginx = !spawnSync('nginx', ['-v']).error;

/** A DNS server answering A queries for one name with a list of addresses that tests change. */
class FakeDockerDns {
  readonly socket = dgram.createSocket('udp4');
  addresses: string[] = [];

  constructor(private readonly name: string) {
    this.socket.on('message', (msg, peer) => this.socket.send(this.answer(msg), peer.port, peer.address));
  }

  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
    return this.socket.address().port;
  }

  private answer(query: Buffer): Buffer {
    let at = 12;
    const labels: string[] = [];
    while (query[at]! > 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString('ascii'));
      at += query[at]! + 1;
    }
    const question = query.subarray(12, at + 5);
    const qtype = query.readUInt16BE(at + 1);
    const known = labels.join('.').toLowerCase() === this.name;
    const records = known && qtype === 1 ? this.addresses : [];
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0);
    header.writeUInt16BE(0x8180 | (known ? 0 : 3), 2); // response, recursion available; NXDOMAIN for other names
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    const answers = records.map((ip) => {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0); // the question's name
      rr.writeUInt16BE(1, 2); // A
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(1, 6); // TTL: nginx's valid= decides
      rr.writeUInt16BE(4, 10);
      ip.split('.').forEach((octet, i) => rr.writeUInt8(Number(octet), 12 + i));
      return rr;
    });
    return Buffer.concat([header, question, ...answers]);
  }

  close(): void {
    this.socket.close();
  }
}

/** A stand-in API replica: answers with its name, and holds GET /v1/events open like the API. */
class FakeReplica {
  readonly served: string[] = [];
  private readonly server: http.Server;
  /** Open event streams, for the test to write to. */
  readonly streams: http.ServerResponse[] = [];

  constructor(
    readonly name: string,
    readonly host: string,
  ) {
    this.server = http.createServer((req, res) => {
      this.served.push(req.url ?? '');
      if (req.url?.startsWith('/v1/events')) {
        // Deliberately without the API's X-Accel-Buffering header: the proxy's own config must suffice.
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(`event: hello\ndata: {"replica":"${this.name}"}\n\n`);
        this.streams.push(res);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ replica: this.name }));
    });
  }

  async listen(port: number): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, this.host, resolve);
    });
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Stops accepting connections and drops open ones, as a killed process does. */
  async kill(): Promise<void> {
    for (const res of this.streams) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('the proxy config under nginx', () => {
  beforeAll(() => {
    if (!hasNginx) throw new Error('nginx is not installed: `apt-get install nginx-light` (scripts/test.sh does it)');
  });
  const dns = new FakeDockerDns('api');
  const replicas = [new FakeReplica('a', '127.0.0.2'), new FakeReplica('b', '127.0.0.3'), new FakeReplica('c', '127.0.0.4')];
  const [a, b, c] = replicas as [FakeReplica, FakeReplica, FakeReplica];
  let dir = '';
  let nginx: ChildProcess | null = null;
  let proxy = '';
  let nginxLog = '';
  let replicaPort = 0;

  /** The replica that answered one request through the proxy (and the status it answered with). */
  async function through(pathname = '/healthz'): Promise<string> {
    const res = await fetch(`${proxy}${pathname}`);
    if (!res.ok) throw new Error(`${pathname}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { replica: string }).replica;
  }

  async function tally(n: number): Promise<Record<string, number>> {
    const seen: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const replica = await through();
      seen[replica] = (seen[replica] ?? 0) + 1;
    }
    return seen;
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'erg-proxy-'));
    const dnsPort = await dns.start();
    replicaPort = await a.listen(0);
    await b.listen(replicaPort);
    dns.addresses = [a.host, b.host];
    const proxyPort = await closedPort();
    proxy = `http://127.0.0.1:${proxyPort}`;
    const conf = readFileSync(proxyConfigPath(), 'utf8')
      .replace(/^(\s*)listen 8080;/m, `$1listen 127.0.0.1:${proxyPort};`)
      .replace('resolver 127.0.0.11 ', `resolver 127.0.0.1:${dnsPort} `)
      .replace('set $erg_api api:8080;', `set $erg_api api:${replicaPort};`)
      // The packaged nginx's compiled-in paths are the system's; a copy of the config keeps its files here.
      .replace(/^http \{/m, `http {\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;`);
    const confPath = path.join(dir, 'nginx.conf');
    writeFileSync(confPath, conf);
    nginx = spawn('nginx', ['-e', 'stderr', '-c', confPath, '-g', `daemon off; pid ${dir}/nginx.pid;`], { stdio: ['ignore', 'ignore', 'pipe'] });
    nginx.stderr!.on('data', (chunk: Buffer) => (nginxLog += chunk.toString()));
    await waitFor(() => through(), { timeoutMs: 10_000, what: `nginx to answer on ${proxy} (its log: ${nginxLog})` });
  }, 20_000);

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((resolve) => nginx!.once('exit', resolve));
      nginx.kill('SIGTERM');
      await exited;
    }
    for (const replica of replicas) await replica.kill().catch(() => undefined);
    dns.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('spreads requests over every replica the api name resolves to', async () => {
    const seen = await tally(60);
    expect(Object.keys(seen).sort()).toEqual(['a', 'b']);
    // Rotated answers, not a fixed first address: neither replica is starved.
    expect(Math.min(seen.a!, seen.b!)).toBeGreaterThanOrEqual(10);
  });

  test('passes an event stream through frame by frame, as the API writes it', async () => {
    const frames: string[] = [];
    const req = http.get(`${proxy}/v1/events?campaign=x`);
    const res = await new Promise<http.IncomingMessage>((resolve) => req.once('response', resolve));
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => frames.push(chunk));
    try {
      expect(res.statusCode).toBe(200);
      // The stream stays open: a buffering proxy would hold these few bytes back.
      await waitFor(() => frames.join('').includes('event: hello'), { timeoutMs: 3000, what: 'the hello frame through the proxy' });
      const upstream = await waitFor(() => replicas.find((r) => r.streams.some((s) => !s.writableEnded)), { timeoutMs: 3000 });
      for (const s of upstream.streams) s.write('event: run\ndata: {"n":1}\n\n');
      await waitFor(() => frames.join('').includes('"n":1'), { timeoutMs: 3000, what: 'a later frame through the proxy' });
    } finally {
      req.destroy();
    }
  });

  test('leaves a client that stops reading its event stream to the replica: nothing piles up in the proxy', async () => {
    // The API cuts off a stream more than 4 MiB behind (MAX_BUFFERED_BYTES in routes/events.ts);
    // that works only if the proxy passes the backpressure on instead of spooling for the client.
    const req = http.get(`${proxy}/v1/events?campaign=slow`);
    const res = await new Promise<http.IncomingMessage>((resolve) => req.once('response', resolve));
    res.pause();
    try {
      const upstream = await waitFor(() => replicas.flatMap((r) => r.streams).find((s) => !s.writableEnded && s.req.url === '/v1/events?campaign=slow'), { timeoutMs: 3000 });
      const frame = `event: power\ndata: ${'x'.repeat(64 * 1024)}\n\n`;
      for (let i = 0; i < 1024; i++) upstream.write(frame); // 64 MiB
      let last = -1;
      const held = await waitFor(
        () => {
          const now = upstream.writableLength;
          const settled = now === last;
          last = now;
          return settled && now;
        },
        { timeoutMs: 10_000, intervalMs: 500, what: "the replica's unsent bytes to settle" },
      );
      // Kernel socket buffers on both sides of the proxy take a few MiB at most.
      expect(held).toBeGreaterThan(32 * 1024 * 1024);
    } finally {
      req.destroy();
    }
  });

  test('skips a replica that refuses connections while DNS still names it', async () => {
    await b.kill();
    const seen = await tally(30);
    expect(seen).toEqual({ a: 30 });
  });

  test('sends requests to a replica added later once DNS names it', async () => {
    await c.listen(replicaPort);
    dns.addresses = [a.host, c.host];
    // The resolver keeps an answer valid= seconds (5 s) before asking again.
    await waitFor(async () => (await through()) === 'c', { timeoutMs: 15_000, intervalMs: 200, what: 'a request served by the new replica' });
  }, 20_000);
});
