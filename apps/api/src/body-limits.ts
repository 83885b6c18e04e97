import { MAX_NODE_REPORT_BYTES } from '@erg/spec';
/**
 * Request body limits per kind of route, bytes. Each route passes its own as `bodyLimit`; routes
 * without one get ERG_BODY_LIMIT. Bodies over the limit are refused with 413 before they are
 * parsed (at once, when Content-Length says so), naming the limit.
 */
export const BODY_LIMITS = {
  /** Campaign specs and suites (which carry a campaign template): YAML or JSON with inline files. */
  spec: 1024 * 1024,
  /** A cluster's settings, private key included (at most 16 KiB of it). */
  cluster: 64 * 1024,
  /**
   * A cluster's carbon intensity series: at most 10,000 points (MAX_CARBON_POINTS_PER_REQUEST) of
   * about 55 bytes each with ISO times. JSON.parse of it takes a few milliseconds.
   */
  carbonIntensity: 1024 * 1024,
  /** A node's `erg-agent doctor --json` report (@erg/spec MAX_NODE_REPORT_BYTES; a few KiB as written). */
  nodeReport: MAX_NODE_REPORT_BYTES,
  /** Small action routes: cancel, trigger, finish, delete. */
  action: 16 * 1024,
  /**
   * A telemetry batch, after gzip is inflated (the limit applies to the inflated size, so a small
   * compressed body cannot expand without bound). The largest batch erg takes, 200,000 samples
   * (MAX_BATCH_SAMPLES), is about 7 MiB of JSON as agents write it; 16 MiB leaves room for
   * wider number formats. It was 64 MiB: JSON.parse of that took about 0.65 s of the event loop.
   */
  telemetry: 16 * 1024 * 1024,
} as const;

/**
 * Bodies larger than these are decoded and validated in a worker thread (offload.ts), smaller
 * ones on the event loop, where they cost at most a few tens of milliseconds. Measured on the
 * development machine: YAML parses at 0.5 µs a byte in block style, 3 µs in flow style and 7 µs
 * when deeply nested (4 KiB: ≤ 30 ms); a JSON spec validates at about 1 µs a byte (16 KiB:
 * ≤ 20 ms); JSON.parse of a telemetry batch takes about 8 ms a MiB.
 */
export const OFFLOAD_ABOVE = {
  /** Campaign specs and suites sent as YAML. Typical specs are 1-3 KiB. */
  yaml: 4 * 1024,
  /** …and as JSON (already parsed by then: what is left is validation). */
  json: 16 * 1024,
  /** Telemetry batches, by their decoding cost (telemetryDecodeCost): bytes, and their objects at OBJECT_DECODE_BYTES each. */
  telemetry: 1024 * 1024,
} as const;

/**
 * What one JSON object of a telemetry batch (a mark, a series, a sensor's declaration) costs to
 * decode beyond its bytes, in bytes of samples. Decoding validates and builds each object on its
 * own: a batch of marks took 9-12 ns a byte where one of samples took 6-7 (on the 2-core
 * development machine, warm; 3-4× under a load average of 20, where allocation costs more). A
 * mark of about 85 bytes costs 0.85-4 µs, as much as 130-570 bytes of samples; 256 is between.
 */
export const OBJECT_DECODE_BYTES = 256;

/**
 * A telemetry batch's decoding cost in bytes of samples, for OFFLOAD_ABOVE.telemetry: its bytes,
 * and OBJECT_DECODE_BYTES for each `{` in it (every object of the JSON starts with one, whatever
 * its spacing or escapes; one in a string counts too, which only sends a batch to the worker
 * sooner). Counted only until it passes `above`: at most about above / OBJECT_DECODE_BYTES native
 * scans (memchr), however many objects the batch has, so a small batch of many marks goes to a
 * worker as a large batch of samples does.
 */
export function telemetryDecodeCost(body: Buffer, above: number): number {
  let cost = body.length;
  for (let i = body.indexOf(0x7b); i >= 0 && cost <= above; i = body.indexOf(0x7b, i + 1)) cost += OBJECT_DECODE_BYTES;
  return cost;
}

/** 1048576 → "1 MiB", 65536 → "64 KiB", 1000 → "1000 bytes". */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
