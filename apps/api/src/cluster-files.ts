import { Readable } from 'node:stream';
import { openClusterCredentials, type ClusterRecord } from '@erg/db';
import { StreamingRedactor, type SecretBox } from '@erg/secrets';
import { ConnectionPool, openJobFile, type JobFile } from '@erg/slurm';
import { ErgError, RUN_DIR_FILES } from '@erg/spec';

/**
 * Reads run logs from clusters for GET /v1/runs/{id}/logs, over the API's own pooled connections
 * (the scheduler has its own); at most 2 channels each, leaving sshd's sessions to the scheduler.
 * The cluster's private key is opened here, for the connection only.
 *
 * Logs are files a job controls, so they are read with @erg/slurm's job-file reader (never
 * followed, never waited on, each read under a deadline), and never held whole: the response is
 * built as the bytes arrive, a redacted chunk of whole lines at a time, so a request costs
 * O(chunk) memory whatever `tailBytes` is. How many reads run at once is limited per token and
 * per cluster (`tryAcquire`); each request uses one SSH channel at a time.
 */
export class ClusterFiles {
  private readonly connections = new ConnectionPool(2);
  /** Log reads in flight, by limiter key (`token:<id>`, `cluster:<id>`). */
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly secrets: SecretBox) {}

  /**
   * Takes one place under every key (each with its own limit) for a log read, or none and null
   * when any key is at its limit. Call the returned function exactly once, when the read is over.
   */
  tryAcquire(places: ReadonlyArray<{ key: string; limit: number }>): (() => void) | null {
    if (places.some(({ key, limit }) => (this.inFlight.get(key) ?? 0) >= limit)) return null;
    for (const { key } of places) this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const { key } of places) {
        const left = (this.inFlight.get(key) ?? 1) - 1;
        if (left > 0) this.inFlight.set(key, left);
        else this.inFlight.delete(key);
      }
    };
  }

  /**
   * Looks at both logs, then answers either why they cannot be read (the job left something
   * other than a regular file: the run's own doing), or the response body as a stream:
   * `{"runId", "source": "cluster", "truncated", "stdout", "stderr"}`. SSH failures throw.
   */
  async openLogs(cluster: ClusterRecord, runId: string, runDir: string, options: { tailBytes: number; timeoutMs: number }): Promise<LogsBody> {
    // Trust on first use is the scheduler's to record; the API never trusts a key blindly.
    if (cluster.hostKeySha256 === null) throw new HostKeyUnknownError(cluster.name);
    // The project's cluster policy decides where it may connect, as for the scheduler's connections.
    const connection = this.connections.get({ ...cluster, ...openClusterCredentials(this.secrets, cluster), allowHosts: cluster.clusterPolicy.allowHosts });
    const open = (file: string, maxBytes: number) => openJobFile(connection, { runDir, file, from: 'end', maxBytes, timeoutMs: options.timeoutMs });
    // One channel at a time per request: stderr is looked at (no bytes) before stdout is opened.
    const stderrLook = await open(RUN_DIR_FILES.stderr, 0);
    if (stderrLook.status === 'refused') return { status: 'refused', message: stderrLook.error.message };
    const stdout = await open(RUN_DIR_FILES.stdout, options.tailBytes);
    if (stdout.status === 'refused') return { status: 'refused', message: stdout.error.message };
    const sizeOf = (f: JobFile) => (f.status === 'open' ? f.size : 0);
    const truncated = sizeOf(stdout) > options.tailBytes || sizeOf(stderrLook) > options.tailBytes;
    const body = Readable.from(logsJson(runId, truncated, stdout, () => open(RUN_DIR_FILES.stderr, options.tailBytes)), { objectMode: false });
    return { status: 'ready', body };
  }

  close(): Promise<void> {
    return this.connections.closeAll();
  }
}

export type LogsBody = { status: 'refused'; message: string } | { status: 'ready'; body: Readable };

/**
 * The JSON body, piece by piece. The status line is already sent when these pieces are made, so
 * a read that fails mid-way (the job swapped the file, the deadline passed) throws, which aborts
 * the response: the client sees a broken transfer, never a well-formed but silently cut log.
 */
async function* logsJson(runId: string, truncated: boolean, stdout: JobFile, openStderr: () => Promise<JobFile>): AsyncGenerator<string> {
  yield `{"runId":${JSON.stringify(runId)},"source":"cluster","truncated":${truncated},"stdout":"`;
  yield* jsonStringContent(stdout);
  yield '","stderr":"';
  const stderr = await openStderr();
  if (stderr.status === 'refused') throw stderr.error;
  yield* jsonStringContent(stderr);
  yield '"}';
}

async function* jsonStringContent(file: JobFile): AsyncGenerator<string> {
  if (file.status !== 'open') return;
  const redactor = new StreamingRedactor();
  for await (const chunk of file.chunks) {
    for (const text of redactor.push(chunk)) {
      yield escapeJson(text);
      // Buffered bytes would otherwise be redacted one segment after another in promise
      // callbacks alone, for as long as the buffer lasts: let other requests in between.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  for (const text of redactor.end()) yield escapeJson(text);
}

/** The inside of a JSON string literal for `text`. */
function escapeJson(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** A trust-on-first-use cluster the scheduler has not reached yet: its host key is not known. */
export class HostKeyUnknownError extends ErgError<'ERG_HOST_KEY_UNKNOWN'> {
  constructor(cluster: string) {
    super('ERG_HOST_KEY_UNKNOWN', `the host key of cluster "${cluster}" is not known yet (trust on first use: the scheduler records it on its first connection)`);
  }
}
