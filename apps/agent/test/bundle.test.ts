import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { waitFor } from '@erg/testkit';
import { AGENT_BUNDLE_PATH, AGENT_VERSION } from '../src/index';
import type { TelemetryBatch } from '../src/wire';
import { AGENT_DIR, cleanupTempDirs, copyFixtures, FIXTURES, readSpool, tempDir } from './helpers';

// The deliverable: dist/erg-agent.js, built by build-bundle.js, runs with plain node and no node_modules.

afterAll(cleanupTempDirs);

describe('the bundle', () => {
  let copy: string;
  beforeAll(() => {
    execFileSync(process.execPath, [path.join(AGENT_DIR, 'build-bundle.js')], { stdio: 'pipe' });
    // Run it from a directory with no node_modules anywhere above, as on a compute node.
    copy = path.join(tempDir(), 'erg-agent.js');
    fs.copyFileSync(AGENT_BUNDLE_PATH, copy);
  });

  test('AGENT_BUNDLE_PATH is dist/erg-agent.js; AGENT_VERSION matches package.json and the banner', () => {
    expect(AGENT_BUNDLE_PATH).toBe(path.join(AGENT_DIR, 'dist', 'erg-agent.js'));
    const pkg = JSON.parse(fs.readFileSync(path.join(AGENT_DIR, 'package.json'), 'utf8')) as { version: string };
    expect(AGENT_VERSION).toBe(pkg.version);
    const head = fs.readFileSync(AGENT_BUNDLE_PATH, 'utf8').split('\n').slice(0, 2);
    expect(head).toEqual(['#!/usr/bin/env node', expect.stringContaining(`erg-agent ${AGENT_VERSION}`)]);
  });

  test('is self-contained: it requires only Node built-ins, and koffi (optional, in a try)', () => {
    const text = fs.readFileSync(AGENT_BUNDLE_PATH, 'utf8');
    const required = new Set([...text.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]));
    for (const name of required) expect(name === 'koffi' || name?.startsWith('node:')).toBe(true);
    expect(required.has('koffi')).toBe(true);
  });

  test('carries zod/mini only, never zod\'s classic API or the spec\'s zod schemas (about 10 MB more RSS on every node)', () => {
    const modules = [...fs.readFileSync(AGENT_BUNDLE_PATH, 'utf8').matchAll(/^\/\/ (\S+)$/gm)].map((m) => m[1] ?? '');
    expect(modules.some((m) => m.includes('node_modules/zod/v4/mini/'))).toBe(true);
    expect(modules.filter((m) => m.includes('zod/v4/classic') || m.includes('zod/v3'))).toEqual([]);
    expect(modules.filter((m) => /packages\/spec\/(src|dist)\/(telemetry|index)\./.test(m))).toEqual([]);
  });

  test('--help prints the usage and exits 0', () => {
    const out = execFileSync(process.execPath, [copy, '--help'], { encoding: 'utf8' });
    expect(out).toContain('Usage:');
    expect(out).toContain('--run-id <uuid>');
  });

  test('bad options exit 2 with a message naming the option', () => {
    const r = spawnSync(process.execPath, [copy, '--spool-dir', tempDir()], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--run-id: is required');
  });

  test('a 1-second run against the fixtures: ready, meta, spool, stats', async () => {
    const spool = tempDir();
    const sysfs = copyFixtures('gh200', 'x86-rapl');
    const child = spawn(process.execPath, [copy, '--run-id', randomUUID(), '--spool-dir', spool, '--node', 'gh-001', '--interval-ms', '100', '--sysfs-root', sysfs, '--procfs-root', path.join(FIXTURES, 'procfs'), '--nvidia-smi', '/nonexistent/nvidia-smi'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await waitFor(() => fs.existsSync(path.join(spool, 'gh-001.ready')), { what: '.ready', timeoutMs: 10_000 });
    const readyAt = Date.now();
    await waitFor(() => Date.now() - readyAt >= 1000 && readSpool(spool, 'gh-001').length >= 1, { what: 'one second of sampling', intervalMs: 50 });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const meta = JSON.parse(fs.readFileSync(path.join(spool, 'gh-001.meta.json'), 'utf8'));
    expect(meta).toMatchObject({ agentVersion: AGENT_VERSION, node: 'gh-001', pid: child.pid, intervalMs: 100 });
    expect(meta.sources.map((s: { name: string }) => s.name)).toEqual(['hwmon', 'rapl', 'procfs']);
    expect(meta.notes.nvml.join()).toContain('koffi cannot be loaded'); // not reachable from the copy
    expect(meta.sensors).toHaveLength(8);
    const batches: TelemetryBatch[] = readSpool(spool, 'gh-001');
    expect(batches[0]?.sensors).toHaveLength(8);
    const module0 = batches.flatMap((b) => b.samples.filter((c) => c.sensor === 'module0.power').flatMap((c) => c.v));
    expect(module0.length).toBeGreaterThanOrEqual(9);
    expect(new Set(module0)).toEqual(new Set([351.234]));
    const energy = batches.flatMap((b) => b.samples.filter((c) => c.sensor === 'cpu0.energy').flatMap((c) => c.v));
    expect(energy[0]).toBe(123456.789012);
    const stats = JSON.parse(fs.readFileSync(path.join(spool, 'gh-001.stats.json'), 'utf8'));
    expect(stats).toMatchObject({ batches: batches.length, lastSeq: batches.length - 1, pushed: 0 });
    expect(stats.samples).toBe(batches.reduce((s, b) => s + b.samples.reduce((x, c) => x + c.t.length, 0), 0));
  });

  test('--max-batch-samples closes a batch early', async () => {
    const spool = tempDir();
    const child = spawn(process.execPath, [copy, '--run-id', randomUUID(), '--spool-dir', spool, '--node', 'n', '--interval-ms', '20', '--batch-ms', '600000', '--max-batch-samples', '12', '--sysfs-root', copyFixtures('gh200'), '--sources', 'hwmon'], { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await waitFor(() => readSpool(spool, 'n').length >= 3, { what: 'three early batches', timeoutMs: 10_000 });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const sizes = readSpool(spool, 'n').map((b) => b.samples.reduce((x, c) => x + c.t.length, 0));
    // 4 sensors per cycle: a batch closes at the first cycle that reaches 12 samples.
    expect(sizes.slice(0, 3)).toEqual([12, 12, 12]);
  });
});
