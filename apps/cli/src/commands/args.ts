// Parsers for command-line values, so that a bad value is a usage error (exit 2) naming the
// argument before any request is made.
import { InvalidArgumentError } from 'commander';
import { IdParams, parseObjectives, type Objective } from '@erg/spec';
import type { z } from 'zod';

/** A campaign or run id: a UUID, checked with the API's own schema. */
export function parseId(what: 'campaign' | 'run' | 'campaign or run'): (value: string) => string {
  return (value) => {
    if (!IdParams.shape.id.safeParse(value).success) {
      throw new InvalidArgumentError(`not a ${what} id (expected a UUID such as 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f)`);
    }
    return value;
  };
}

/** A poll interval in seconds (0.2 to 3600). */
export function parseSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0.2 || n > 3600) throw new InvalidArgumentError('expected a number of seconds from 0.2 to 3600');
  return n;
}

/** A TCP port. */
export function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new InvalidArgumentError('expected a port number from 1 to 65535');
  return n;
}

/**
 * A cap such as a cluster's maxQueuedJobs: a whole number from `min` to 1,000,000, or `none` (no
 * cap; kept as the word: commander takes a parser's null for "no value given").
 */
export function parseCap(min: number): (value: string) => number | 'none' {
  return (value) => {
    if (value === 'none') return 'none';
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > 1_000_000) throw new InvalidArgumentError(`expected a whole number from ${min} to 1000000, or none`);
    return n;
  };
}

/** One of a zod enum's values. */
export function parseChoice<T extends string>(schema: z.ZodEnum<{ [K in T]: K }>): (value: string) => T {
  return (value) => {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new InvalidArgumentError(`expected one of ${schema.options.join(', ')}`);
    return parsed.data;
  };
}

/** Two distinct Pareto objectives, `time,carbon`, checked with the API's own parser. */
export function parseObjectivesArg(value: string): [Objective, Objective] {
  const parsed = parseObjectives(value);
  if (!parsed.ok) throw new InvalidArgumentError(parsed.message);
  return parsed.objectives;
}
