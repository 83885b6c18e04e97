// What a command may touch besides its arguments: the terminal, the clock, the API. main.ts
// builds the real one from `process`; tests build one with captured output, a fake clock and a
// scripted fetch, and run the very same commands.
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { createErgClient, ErgApiError, type ErgClient } from '@erg/client';
import { colorEnabled, colors, type Colors } from './output/color';
import { parseCliEnv, requireApi, resolveConfig, type CliEnv, type ConfigFlags, type ResolvedConfig } from './config';
import { fromApiFailure, type ApiTarget } from './errors';

/** A stream the CLI writes to. */
export interface Output {
  write(text: string): void;
  /** Whether a person is watching: decides colour and in-place redraws. */
  readonly isTTY: boolean;
  /** Terminal width, when known. */
  readonly columns?: number | undefined;
}

/** The process around the CLI. */
export interface CliRuntime {
  stdout: Output;
  stderr: Output;
  /** Standard input (for `erg login` without --token): everything when piped, one line at a terminal. */
  readStdin(): Promise<string>;
  stdinIsTTY: boolean;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The fetch the API client uses; the global one when absent. */
  fetch?: typeof globalThis.fetch;
  /** Milliseconds since the epoch. */
  now(): number;
  /** Waits `ms`, or rejects with an AbortError when `signal` fires. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `handler` on Ctrl-C until the returned function is called; without a handler Ctrl-C ends the process. */
  onInterrupt(handler: () => void): () => void;
}

/** A runtime on the real process. */
export function processRuntime(): CliRuntime {
  return {
    stdout: { write: (t) => void process.stdout.write(t), isTTY: process.stdout.isTTY === true, get columns() { return process.stdout.columns; } },
    stderr: { write: (t) => void process.stderr.write(t), isTTY: process.stderr.isTTY === true, get columns() { return process.stderr.columns; } },
    readStdin: async () => {
      if (process.stdin.isTTY) {
        // At a terminal: one line, not "until Ctrl-D".
        const rl = createInterface({ input: process.stdin });
        const line = await new Promise<string>((resolve) => {
          rl.once('line', resolve);
          rl.once('close', () => resolve(''));
        });
        rl.close();
        return line;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    stdinIsTTY: process.stdin.isTTY === true,
    env: process.env,
    cwd: process.cwd(),
    now: () => Date.now(),
    sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : {}),
    onInterrupt: (handler) => {
      process.on('SIGINT', handler);
      return () => void process.off('SIGINT', handler);
    },
  };
}

/** The options every command accepts (defined on the program, see program.ts). */
export interface GlobalOptions extends ConfigFlags {
  color: boolean;
}

/** How long one API request may take before the CLI gives up on it. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** A typed API client whose failures come out as CliErrors (exit codes, hints). */
export interface Api {
  readonly target: ApiTarget;
  readonly client: ErgClient;
  /** Runs one request and returns its body; an error answer or no answer becomes a CliError. */
  call<T>(request: (client: ErgClient) => Promise<{ data?: T }>): Promise<T>;
  /**
   * GETs `path` (`/v1/...`) for an answer that is not JSON (an archive), its body left to read as
   * a stream; an error answer or no answer becomes a CliError. `signal` is the caller's: a body
   * may take longer than one request (the caller bounds its waits between bytes).
   */
  download(path: string, signal: AbortSignal): Promise<Response>;
}

/** What a command's action works with: the runtime, the parsed environment, colours, and the API on demand. */
export class CommandContext {
  readonly env: CliEnv;
  readonly color: Colors;
  private resolved: ResolvedConfig | null = null;
  private api: Api | null = null;

  constructor(
    readonly runtime: CliRuntime,
    readonly options: GlobalOptions,
  ) {
    this.env = parseCliEnv(runtime.env);
    this.color = colors(
      colorEnabled({ flag: options.color, isTTY: runtime.stdout.isTTY, noColor: this.env.NO_COLOR, forceColor: this.env.FORCE_COLOR }),
    );
  }

  get stdout(): Output {
    return this.runtime.stdout;
  }

  get stderr(): Output {
    return this.runtime.stderr;
  }

  /** The configuration by the precedence of config.ts, read when first needed (offline commands never read it). */
  config(): ResolvedConfig {
    this.resolved ??= resolveConfig({ flags: this.options, env: this.env, cwd: this.runtime.cwd });
    return this.resolved;
  }

  /** The API client; throws a CliError that says how to configure it when URL or token are missing. */
  connect(): Api {
    if (this.api) return this.api;
    const { apiUrl, token } = requireApi(this.config());
    this.api = createApi({ baseUrl: apiUrl.value, token: token.value, apiUrlSource: apiUrl.origin, tokenSource: token.origin }, this.runtime.fetch);
    return this.api;
  }
}

/** An Api for `baseUrl` and `token`; `erg login` uses it directly to check a token before saving it. */
export function createApi(settings: { baseUrl: string; token: string; apiUrlSource: string; tokenSource: string }, fetchImpl?: typeof globalThis.fetch): Api {
  const baseFetch = fetchImpl ?? globalThis.fetch;
  // A request that gets no answer would otherwise hang the CLI forever (a dropped packet, a
  // stopped VM); the caller's own signal (Ctrl-C during watch) still applies.
  const fetchWithTimeout: typeof globalThis.fetch = (input, init) => {
    const own = input instanceof Request ? input.signal : init?.signal;
    const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    return baseFetch(input, { ...init, signal: own ? AbortSignal.any([own, timeout]) : timeout });
  };
  const client = createErgClient({ baseUrl: settings.baseUrl, token: settings.token, fetch: fetchWithTimeout });
  const baseUrl = settings.baseUrl.replace(/\/+$/, '');
  const target: ApiTarget = { apiUrl: settings.baseUrl, apiUrlSource: settings.apiUrlSource, tokenSource: settings.tokenSource };
  return {
    target,
    client,
    async call(request) {
      try {
        const { data } = await request(client);
        if (data === undefined) throw new Error('the API answered without a body');
        return data;
      } catch (err) {
        throw fromApiFailure(err, target);
      }
    },
    async download(path, signal) {
      try {
        const response = await baseFetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${settings.token}` }, signal });
        if (response.ok) return response;
        const text = await response.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON (a proxy's HTML page, say): keep the text for the message
        }
        throw ErgApiError.fromBody(response.status, body);
      } catch (err) {
        throw fromApiFailure(err, target);
      }
    },
  };
}
