/**
 * Reading files a job controls, against the real sshd of the local cluster: what the job may put
 * where its stdout.log belongs (a directory, a FIFO, a symlink, a 1 TiB sparse file) is refused
 * with a reason, never followed, never waited on; regular files stream in windows; and every SFTP
 * request has a deadline after which its stuck channel is given up.
 */
import { loadLocalCluster, LOOPBACK_ALLOW_HOSTS, uniqueName, waitFor, type LocalCluster } from '@erg/testkit';
import { ClusterConnection, JobFileRefusedError, openJobFile, readJobFile, shellQuote, SshTimeoutError, type JobFileRequest, type StreamRunner } from '../src';

let cluster: LocalCluster;
let conn: ClusterConnection;
let runDir: string;
const opened: ClusterConnection[] = [];

function connect(overrides: Partial<ConstructorParameters<typeof ClusterConnection>[0]> = {}): ClusterConnection {
  const c = new ClusterConnection({
    host: cluster.host, port: cluster.port, username: cluster.user, privateKey: cluster.privateKey, hostKeySha256: cluster.hostKeySha256,
    allowHosts: LOOPBACK_ALLOW_HOSTS, ...overrides,
  });
  opened.push(c);
  return c;
}

const request = (file: string, more: Partial<JobFileRequest> = {}): JobFileRequest => ({ runDir, file, maxBytes: 1 << 20, timeoutMs: 10_000, ...more });

async function sh(command: string): Promise<void> {
  const r = await conn.exec(command);
  if (r.code !== 0) throw new Error(`${command} failed: ${r.stderr}`);
}

beforeAll(async () => {
  cluster = loadLocalCluster();
  conn = connect();
  runDir = `${cluster.workDir}/slurm-job-files-e2e/${uniqueName('run')}`;
  const q = shellQuote(runDir);
  await sh(
    `mkdir -p ${q}/telemetry ${q}/real && cd ${q} && printf '0123456789' > small && mkdir dir && mkfifo fifo && ln -s /etc/passwd link && ` +
      `truncate -s 1T sparse && ln -s real linkdir && printf 'x' > real/inside && echo a > swapped-fifo && echo b > swapped-link && seq 1 200000 > numbers`,
  );
});

afterAll(async () => {
  if (runDir) await conn.exec(`rm -rf ${shellQuote(runDir)}`).catch(() => undefined);
  await Promise.all(opened.map((c) => c.close()));
});

describe('regular files', () => {
  it('reads the whole file, its head, its tail, and a window from an offset', async () => {
    expect(await readJobFile(conn, request('small'))).toMatchObject({ status: 'read', text: '0123456789', size: 10, start: 0, length: 10, truncated: false });
    expect(await readJobFile(conn, request('small', { maxBytes: 4 }))).toMatchObject({ text: '0123', truncated: true });
    expect(await readJobFile(conn, request('small', { maxBytes: 4, from: 'end' }))).toMatchObject({ text: '6789', start: 6, truncated: true });
    expect(await readJobFile(conn, request('small', { maxBytes: 3, offset: 5 }))).toMatchObject({ text: '567', start: 5, length: 3 });
    expect(await readJobFile(conn, request('small', { offset: 50 }))).toMatchObject({ text: '', start: 10, length: 0 });
  });

  it('streams a file larger than the SSH window in chunks, byte for byte', async () => {
    const file = await openJobFile(conn, request('numbers', { maxBytes: 1 << 30 }));
    if (file.status !== 'open') throw new Error(`expected an open file, got ${file.status}`);
    const parts: Buffer[] = [];
    for await (const chunk of file.chunks) parts.push(chunk);
    const expected = Array.from({ length: 200_000 }, (_, i) => `${i + 1}\n`).join('');
    expect(file.size).toBe(expected.length);
    expect(parts.length).toBeGreaterThan(1);
    expect(Buffer.concat(parts).toString()).toBe(expected);
  });

  it('stops the remote read when the reader stops early, and frees the channel', async () => {
    const file = await openJobFile(conn, request('numbers'));
    if (file.status !== 'open') throw new Error(`expected an open file, got ${file.status}`);
    for await (const chunk of file.chunks) {
      expect(chunk.length).toBeGreaterThan(0);
      break;
    }
    await waitFor(() => conn.channelStats.open === 0, { timeoutMs: 5000, what: 'the reading channel to close' });
  });

  it('answers missing for a file that does not exist', async () => {
    expect(await readJobFile(conn, request('nope.log'))).toEqual({ status: 'missing' });
  });
});

describe('what a job may leave instead of a regular file', () => {
  const refused = async (file: string) => {
    const result = await readJobFile(conn, request(file));
    if (result.status !== 'refused') throw new Error(`expected ${file} to be refused, got ${result.status}`);
    expect(result.error).toBeInstanceOf(JobFileRefusedError);
    expect(result.error).toMatchObject({ code: 'ERG_JOB_FILE_REFUSED', retryable: false, file });
    return result.error;
  };

  it('refuses a directory, a FIFO and a symbolic link, saying what each is', async () => {
    expect((await refused('dir')).message).toBe('dir is a directory, not a regular file; erg reads job output only from regular files');
    expect((await refused('fifo')).message).toBe('fifo is a FIFO, not a regular file; erg reads job output only from regular files');
    expect((await refused('link')).message).toBe('link is a symbolic link, not a regular file; erg does not follow links in a run directory');
  });

  it('refuses a 1 TiB sparse file without reading it', async () => {
    const err = await refused('sparse');
    expect(err.reason).toBe('sparse');
    expect(err.message).toBe('sparse is a sparse file of 1 TiB with only 0 B allocated; erg does not read files that are mostly holes');
  });

  it('refuses a file under a directory that is a symbolic link', async () => {
    const err = await refused('linkdir/inside');
    expect(err.reason).toBe('link-in-path');
    expect(err.message).toContain('erg does not follow links in a run directory');
  });

  // The check and the read are two steps; a job can swap the file in between. dd's flags hold
  // then: a runner that swaps the file right before dd shows it.
  const swappingBeforeRead = (swap: string): StreamRunner => ({
    hostPort: conn.hostPort,
    execStream: (command, options) => conn.execStream(command.replace('exec dd', `${swap} && exec dd`), options),
  });

  it('does not wait on a FIFO swapped in after the check, even one a writer holds open without writing', async () => {
    // A writer holds the FIFO open and writes nothing: a blocking read would wait for ever. The
    // shell opens it (read-write: no wait for a reader) before dd starts and hands it to a
    // background sleep, so the writer is there when dd reads; a writer that opened it only after
    // dd's open raced dd's read (an empty read, then a writer blocked for ever holding the channel).
    const runner = swappingBeforeRead('rm -f "$p" && mkfifo "$p" && exec 3<>"$p" && { sleep 2 </dev/null >/dev/null 2>&1 & } && exec 3>&-');
    const result = await readJobFile(runner, request('swapped-fifo', { timeoutMs: 30_000 }));
    expect(result.status).toBe('refused');
    const err = (result as { error: JobFileRefusedError }).error;
    expect(err).toMatchObject({ code: 'ERG_JOB_FILE_REFUSED', reason: 'unreadable', file: 'swapped-fifo' });
    expect(err.message).toMatch(/^swapped-fifo could not be read \(dd: error reading .*Resource temporarily unavailable\)/);
  });

  it('does not follow a symbolic link swapped in after the check', async () => {
    const runner = swappingBeforeRead('rm -f "$p" && ln -s /etc/passwd "$p"');
    const result = await readJobFile(runner, request('swapped-link'));
    expect(result.status).toBe('refused');
    expect((result as { error: JobFileRefusedError }).error.message).toContain('Too many levels of symbolic links');
  });
});

describe('deadlines', () => {
  it('gives every SFTP request a deadline and then gives up its channel, so later requests are served', async () => {
    const quick = connect({ sftpTimeoutMs: 1000 });
    const fifo = `${runDir}/fifo`;
    try {
      // sftp-server blocks in open() of a FIFO without a writer: the request never answers.
      const err = await quick.readFile(fifo).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SshTimeoutError);
      expect((err as Error).message).toContain(`SFTP open ${fifo}`);
      // A fresh SFTP channel serves the next request.
      expect((await quick.readFile(`${runDir}/small`))?.text).toBe('0123456789');
    } finally {
      // Release the stuck sftp-server on the server: a writer lets its open() return.
      await conn.exec(`timeout 2 sh -c ': > ${shellQuote(fifo)}'`).catch(() => undefined);
    }
  }, 20_000);

  it('a read still going at its deadline is killed on the login node and fails as a retryable timeout, not as the file\'s fault', async () => {
    await sh(`cd ${shellQuote(runDir)} && yes 'step loss=1.5' | head -c 50000000 > big.log`);
    const file = await openJobFile(conn, request('big.log', { maxBytes: 1 << 30, timeoutMs: 1000 }));
    if (file.status !== 'open') throw new Error(`expected an open file, got ${file.status}`);
    let read = 0;
    const err = await (async () => {
      // A slow reader: SSH flow control holds dd back until the deadline kills it.
      for await (const chunk of file.chunks) {
        read += chunk.length;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshTimeoutError);
    expect(err).toMatchObject({ code: 'ERG_SSH_TIMEOUT', retryable: true, timeoutMs: 1000 });
    expect(read).toBeLessThan(50_000_000);
  }, 20_000);

  it('kills a stream at its deadline with a retryable SshTimeoutError', async () => {
    const stream = await conn.execStream('echo start; sleep 5; echo never', { timeoutMs: 500 });
    const received: string[] = [];
    const err = await (async () => {
      for await (const chunk of stream.stdout) received.push(chunk.toString());
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshTimeoutError);
    expect(received.join('')).toBe('start\n');
    await expect(stream.done).rejects.toBeInstanceOf(SshTimeoutError);
  });

  it('streams a command: exit status and stderr arrive in done', async () => {
    const stream = await conn.execStream('printf abc; echo oops >&2; exit 3');
    const parts: Buffer[] = [];
    for await (const chunk of stream.stdout) parts.push(chunk);
    expect(Buffer.concat(parts).toString()).toBe('abc');
    expect(await stream.done).toEqual({ code: 3, signal: null, stderr: 'oops\n' });
  });
});
