import fs from 'node:fs';
import { gpuTemperatures, meanNodePower } from '@erg/energy/node-power';
import { parseCooldownPlan, type CooldownPlan, type IdleReference } from '@erg/spec/cooldown-plan';
import type { NodeCooldown } from '@erg/spec';
import { cooldownVerdict, type CooldownReading, type CooldownVerdict } from './cooldown-decision';
import { writeFileAtomic } from './files';
import { errorMessage, type Logger } from './log';
import type { SampleStore } from './samples';

// The cooldown on one node (the spec's cooldown block): from its first sample the agent keeps the
// last 2 × settleS seconds of its power, energy and GPU temperature readings, and every
// EVALUATE_EVERY_MS asks cooldown-decision.ts whether the node has cooled — by the energy
// selection rules its idle reference was measured with (@erg/energy/node-power). It writes
// `<node>.cooled.json` (NodeCooldown, one JSON line, atomically) once it has, or at maxWaitS with
// reached: false; job.sh waits for one per node before the idle baseline and the workload.

/** How often the readings are checked: often enough that no wait runs long, seldom enough to cost nothing. */
export const EVALUATE_EVERY_MS = 250;
/** Most samples kept per sensor: at fine intervals every (2 × settleS / this)-th ms is kept, a bounded memory whatever the interval. */
export const RING_SAMPLES = 1024;

/** The sensors the verdict reads: power and energy (the energy rules pick among them) and GPU temperatures. */
const WATCHED = /^(?:[a-z]+\d*\.(?:power|energy)|gpu\d+\.temp)$/;
const TEMPERATURE = /\.temp$/;

/** One sensor's recent samples, oldest first. */
interface Ring {
  sensor: string;
  t: number[];
  v: number[];
}

export class CooldownWatch {
  private readonly rings = new Map<number, Ring>();
  private readonly reference: IdleReference | null;
  private readonly settleMs: number;
  private readonly spacingMs: number;
  private watchedVersion = -1;
  /** The first sample's time: the wait is counted from it, as job.sh counts from every node's first sample. */
  private startedAt: number | null = null;
  private evaluatedAt = -Infinity;
  private finished = false;

  constructor(
    private readonly plan: CooldownPlan,
    private readonly node: string,
    private readonly store: SampleStore,
    /** `<node>.cooled.json` in the telemetry folder. */
    private readonly file: string,
    private readonly log: Logger,
  ) {
    this.reference = plan.references.find((r) => r.node === node) ?? null;
    this.settleMs = plan.settleS * 1000;
    this.spacingMs = (2 * this.settleMs) / RING_SAMPLES;
  }

  /** The plan's maxWaitS, in ms: the latest the record is written after the first sample. */
  get maxWaitMs(): number {
    return this.plan.maxWaitS * 1000;
  }

  /** Whether the record is written: nothing more to do. */
  get done(): boolean {
    return this.finished;
  }

  /** After a sample (or at the deadline, with none): takes the new readings and, when due, decides. */
  observe(t: number): void {
    if (this.finished) return;
    if (this.startedAt === null) {
      if (this.store.totalSamples === 0) return;
      this.startedAt = t;
    }
    this.take();
    const elapsed = t - this.startedAt;
    const timedOut = elapsed >= this.plan.maxWaitS * 1000;
    if (!timedOut && t - this.evaluatedAt < EVALUATE_EVERY_MS) return;
    this.evaluatedAt = t;
    // A settleS window of samples before the reference is compared, two before settling is judged.
    const needed = (this.reference ? 1 : 2) * this.settleMs;
    if (!timedOut && elapsed < needed) return;
    const verdict = cooldownVerdict(this.plan, this.reference, this.reading(t, elapsed));
    if (verdict.cool || timedOut) this.finish(t, elapsed, verdict.cool, verdict);
  }

  /** The readings over the last settleS (and, after two of them, the settleS before). */
  reading(t: number, elapsed: number): CooldownReading {
    const telemetry = {
      node: this.node,
      series: [...this.rings.values()].map((r) => ({ sensor: r.sensor, t: r.t, v: r.v })),
      sensors: [...this.rings.keys()].flatMap((id) => {
        const info = this.store.info(id);
        return info ? [info] : [];
      }),
    };
    const last = { startMs: t - this.settleMs, endMs: t };
    const previous = { startMs: t - 2 * this.settleMs, endMs: t - this.settleMs };
    return {
      powerSensors: telemetry.series.some((series) => !TEMPERATURE.test(series.sensor)),
      powerW: meanNodePower(telemetry, last).powerW,
      previousPowerW: elapsed >= 2 * this.settleMs ? meanNodePower(telemetry, previous).powerW : null,
      gpus: gpuTemperatures(telemetry, last).map((g) => ({ gpu: g.gpu, tempC: g.meanTempC })),
    };
  }

  /** Copies every watched sensor's newest sample into its ring (at most one per spacingMs) and forgets what is older than 2 × settleS. */
  private take(): void {
    if (this.watchedVersion !== this.store.version) this.watch();
    for (const [id, ring] of this.rings) {
      const t = this.store.latestTime(id);
      const last = ring.t.length === 0 ? -Infinity : ring.t[ring.t.length - 1]!;
      if (!(t > last) || t - last < this.spacingMs) continue;
      ring.t.push(t);
      ring.v.push(this.store.latestValue(id));
      // Keep one sample at or before the horizon: the window's edge is interpolated from it.
      const horizon = t - 2 * this.settleMs;
      let drop = 0;
      while (drop + 1 < ring.t.length && ring.t[drop + 1]! <= horizon) drop += 1;
      if (drop > 0) {
        ring.t.splice(0, drop);
        ring.v.splice(0, drop);
      }
    }
  }

  /** Follows the store's sensor set: a sensor that joined is watched, one that dropped out is forgotten. */
  private watch(): void {
    this.watchedVersion = this.store.version;
    for (let id = 0; id < this.store.registered; id += 1) {
      const info = this.store.info(id);
      const wanted = info !== undefined && this.store.isActive(id) && WATCHED.test(info.sensor);
      if (wanted && !this.rings.has(id)) this.rings.set(id, { sensor: info.sensor, t: [], v: [] });
      if (!wanted) this.rings.delete(id);
    }
  }

  private finish(t: number, elapsed: number, reached: boolean, verdict: CooldownVerdict): void {
    const { cool: _cool, ...figures } = verdict;
    const record: NodeCooldown = { node: this.node, waitedS: Math.round(elapsed) / 1000, reached, ...figures };
    // A failed write throws to the caller (the sampling cycle logs it) and is tried again at the next check.
    writeFileAtomic(this.file, `${JSON.stringify(record)}\n`, { fsync: true });
    this.finished = true;
    this.rings.clear();
    this.log.info(reached ? 'node cooled down' : 'cooldown: maxWaitS passed before the node cooled', { ...record, at: t });
  }
}

/**
 * The agent's cooldown from `--cooldown`: null when there is none to do — no option, or this
 * node's record is already there (a restarted agent: job.sh is past the wait). A plan that cannot
 * be read is said in the log and answered at once with a record that the node did not cool, so
 * job.sh does not wait for nothing.
 */
export function startCooldownWatch(planFile: string | undefined, node: string, store: SampleStore, file: string, log: Logger): CooldownWatch | null {
  if (planFile === undefined || fs.existsSync(file)) return null;
  let parsed;
  try {
    parsed = parseCooldownPlan(fs.readFileSync(planFile, 'utf8'));
  } catch (err) {
    parsed = { ok: false as const, reason: errorMessage(err) };
  }
  if (parsed.ok) return new CooldownWatch(parsed.plan, node, store, file, log);
  log.warn('cooldown plan unreadable; the node is recorded as not cooled', { file: planFile, reason: parsed.reason });
  const record: NodeCooldown = {
    node, waitedS: 0, reached: false, criterion: 'settled', powerW: null, referenceW: null, maxGpuTempC: null, referenceTempC: null, gpus: [],
  };
  writeFileAtomic(file, `${JSON.stringify(record)}\n`, { fsync: true });
  return null;
}
