import { writeFileAtomic } from './files';
import { errorMessage, type Logger } from './log';
import type { SampleStore } from './samples';
import type { ActiveSource } from './sources';

/** One sampling cycle: every active source read once into the store; `.ready` written after the first sample. */
export class Sampler {
  /** Source reads that threw (a source's own per-sensor errors are in its stats). */
  readErrors = 0;
  /** Whether `.ready` was written: "this agent process is sampling". */
  private ready = false;

  constructor(
    private readonly active: readonly ActiveSource[],
    private readonly store: SampleStore,
    private readonly readyFile: string,
    private readonly log: Logger,
  ) {}

  /** Reads every source with the cycle's time `t` (Unix ms). */
  sample(t: number): void {
    for (const { source, sink } of this.active) {
      try {
        source.read(t, sink);
      } catch (err) {
        this.readErrors += 1;
        this.log.warnOnce(`read:${source.name}:${errorMessage(err)}`, 'source read failed', { source: source.name, error: errorMessage(err) });
      }
    }
    if (!this.ready && this.store.totalSamples > 0) this.markReady(t);
  }

  private markReady(t: number): void {
    this.ready = true;
    writeFileAtomic(this.readyFile, `${JSON.stringify({ pid: process.pid, t })}\n`);
  }
}
