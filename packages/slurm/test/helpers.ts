import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CampaignSpec, type CampaignSpecInput } from '@erg/spec';
import type { RenderInput } from '../src';

/** A validated campaign spec (through the real zod schema), with test defaults. */
export function spec(overrides: Partial<CampaignSpecInput> = {}): CampaignSpec {
  return CampaignSpec.parse({
    name: 'slurm-tests',
    cluster: 'local',
    parameters: { v: ['a'] },
    resources: { time: '00:05:00' },
    run: 'echo {{v}}\n',
    ...overrides,
  });
}

/** A render input for one run of `spec`, overridable. */
export function renderInput(overrides: Partial<RenderInput> = {}): RenderInput {
  return {
    runId: 'run_01',
    campaignId: 'camp_01',
    repetition: 1,
    configKey: 'v=a',
    parameters: { v: 'a' },
    spec: spec(),
    runDir: '/scratch/erg/camp_01/run_01',
    ...overrides,
  };
}

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(prefix = 'erg-slurm-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs bash with a script file or -c text; returns stdout/stderr as Buffers. */
export function bash(args: string[], options: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {}) {
  const result = spawnSync('bash', args, {
    cwd: options.cwd,
    input: options.input,
    env: options.env ?? { PATH: process.env.PATH, HOME: os.tmpdir(), LC_ALL: 'C' },
    timeout: 10_000,
  });
  if (result.error) throw result.error;
  return result;
}
