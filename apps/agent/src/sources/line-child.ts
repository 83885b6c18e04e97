import type { ChildProcess, spawn as spawnType } from 'node:child_process';
import type { Logger } from '../log';

// A long-running tool whose stdout is read line by line (`nvidia-smi … -lms`, `dcgmi dmon … -d`):
// started once, started again (a few times, a second apart) when it exits on its own, stopped with
// SIGTERM and then SIGKILL. What a line means is its owner's business (onLine).

/** Times an exited child is started again, a second later each time. */
const MAX_RESTARTS = 5;
const RESTART_DELAY_MS = 1000;

export interface LineChildOptions {
  bin: string;
  args: readonly string[];
  /** Names the tool in log events (`<name> child exited`). */
  name: string;
  log: Logger;
  /** Each complete line of stdout, without its newline. */
  onLine(line: string): void;
}

export class LineChild {
  private child: ChildProcess | undefined;
  private stopped = false;
  private restarts = 0;
  /** The start of a line whose end has not arrived yet. */
  private carry = '';

  constructor(
    private readonly spawn: typeof spawnType,
    private readonly options: LineChildOptions,
  ) {}

  start(): void {
    const { bin, args, name, log } = this.options;
    const c = this.spawn(bin, [...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    this.child = c;
    this.carry = '';
    c.stdout?.setEncoding('utf8');
    c.stdout?.on('data', (chunk: string) => this.onOutput(chunk));
    c.on('error', (err) => log.warnOnce(`${name}-error`, `${name} child failed`, { error: err.message }));
    c.on('exit', (code, signal) => this.onExit(code, signal));
  }

  stats(): { restarts: number; pid: number | null } {
    return { restarts: this.restarts, pid: this.child?.pid ?? null };
  }

  /** Stops the child: SIGTERM, then SIGKILL after a second. */
  async stop(): Promise<void> {
    this.stopped = true;
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 1000);
    await exited;
    clearTimeout(timer);
  }

  private onOutput(chunk: string): void {
    const text = this.carry + chunk;
    let from = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
      this.options.onLine(text.slice(from, nl));
      from = nl + 1;
    }
    this.carry = text.slice(from);
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stopped) return;
    // It should run until we stop it; start it again, a few times, a second later.
    this.options.log.warn(`${this.options.name} child exited`, { code, signal, restarts: this.restarts });
    if (this.restarts < MAX_RESTARTS) {
      this.restarts += 1;
      setTimeout(() => !this.stopped && this.start(), RESTART_DELAY_MS);
    }
  }
}
