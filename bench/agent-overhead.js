#!/usr/bin/env node
// Benchmark: the telemetry agent's own cost on a node — CPU time as % of one core and peak
// RSS — at 10 Hz (--interval-ms 100) on exactly 8 sensors, spool only (no API):
//   GH200 hwmon fixture (module0/grace0/cpu0/sysio0.power)   4
//   x86 RAPL fixture (cpu0.energy, memory0.energy)           2
//   this machine's /proc (cpu0.util, node0.mem_used)         2
// The fixtures are files laid out like the real sysfs ones (apps/agent/test/fixtures); reading
// a real sysfs attribute costs about the same syscalls. Target: < 1 % of one core, < 50 MB RSS.
//
//   node bench/agent-overhead.js 60       # --help: the options
//
// Needs the bundle: npm run build -w @erg/agent (built here if missing).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const { parseOptions } = require('./lib/options');

const { opts, fail } = parseOptions({
  script: __filename,
  summary: 'the telemetry agent\'s own cost on a node: CPU time as % of one core and peak RSS, at 10 Hz on 8 sensors '
    + '(GH200 hwmon and x86 RAPL fixtures, this machine\'s /proc), spool only. Target: < 1 % of one core, < 50 MB RSS. '
    + 'Needs the agent\'s bundle (npm run build -w @erg/agent; built here if missing).',
  positionals: [{ name: 'seconds', type: 'number', default: 60, quick: 3, description: 'how long the agent runs, warm-up included (at least 5; with --quick at least 3)' }],
  options: {
    quick: { type: 'boolean', description: '3 s with a 1 s warm-up instead of 2 s (a test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end, with the samples the spool holds per sensor (the text goes to stderr)' },
  },
  examples: ['node bench/agent-overhead.js 60', 'node bench/agent-overhead.js --quick --json'],
});
const seconds = opts.seconds;
// Seconds of warm-up before the steady-state CPU is measured.
const warmup = opts.quick ? 1 : 2;
if (!(seconds >= 2 * warmup + 1)) fail(`seconds takes a number ≥ ${2 * warmup + 1}${opts.quick ? ' with --quick' : ''}, not "${seconds}"`);
const log = opts.json ? console.error : console.log;
const root = path.resolve(__dirname, '..');
const agentDir = path.join(root, 'apps', 'agent');
const bundle = path.join(agentDir, 'dist', 'erg-agent.js');
const fixtures = path.join(agentDir, 'test', 'fixtures');
if (!fs.existsSync(bundle)) execFileSync(process.execPath, [path.join(agentDir, 'build-bundle.js')], { stdio: 'inherit' });

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-agent-bench-'));
const sysfs = path.join(work, 'sysfs');
fs.cpSync(path.join(fixtures, 'gh200'), sysfs, { recursive: true });
fs.cpSync(path.join(fixtures, 'x86-rapl'), sysfs, { recursive: true });
const spoolDir = path.join(work, 'spool');
const clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clkTck;
}
function statusKb(pid, key) {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  // Run the bundle from a copy outside the repository: no node_modules reachable (koffi absent), as on a node.
  const agentFile = path.join(work, 'erg-agent.js');
  fs.copyFileSync(bundle, agentFile);
  const args = [agentFile, '--run-id', randomUUID(), '--spool-dir', spoolDir, '--node', 'bench', '--interval-ms', '100',
    '--sysfs-root', sysfs, '--procfs-root', '/proc', '--sources', 'hwmon,rapl,procfs'];
  // With --json, stdout is the JSON line's alone: the agent's own output goes to stderr.
  const child = spawn(process.execPath, args, { stdio: ['ignore', opts.json ? 2 : 'inherit', 'inherit'] });
  const readyFile = path.join(spoolDir, 'bench.ready');
  for (let i = 0; !fs.existsSync(readyFile); i += 1) {
    if (i > 200 || child.exitCode !== null) throw new Error('the agent did not become ready');
    await sleep(50);
  }
  const startupCpu = cpuSeconds(child.pid);
  await sleep(warmup * 1000);
  const cpu0 = cpuSeconds(child.pid);
  const t0 = process.hrtime.bigint();
  await sleep((seconds - warmup) * 1000);
  const cpu1 = cpuSeconds(child.pid);
  const t1 = process.hrtime.bigint();
  const hwmKb = statusKb(child.pid, 'VmHWM');
  const rssKb = statusKb(child.pid, 'VmRSS');
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const code = await exited;
  const stats = JSON.parse(fs.readFileSync(path.join(spoolDir, 'bench.stats.json'), 'utf8'));
  const meta = JSON.parse(fs.readFileSync(path.join(spoolDir, 'bench.meta.json'), 'utf8'));
  const wall = Number(t1 - t0) / 1e9;
  const result = {
    seconds,
    sensors: meta.sensors.map((s) => s.sensor),
    intervalMs: 100,
    steadyCpuPercentOfOneCore: +((100 * (cpu1 - cpu0)) / wall).toFixed(3),
    wholeRunCpuPercentOfOneCore: +((100 * cpu1) / (wall + warmup)).toFixed(3),
    startupCpuSeconds: +startupCpu.toFixed(3),
    maxRssMB: +(hwmKb / 1024).toFixed(1),
    rssAtEndMB: +(rssKb / 1024).toFixed(1),
    samples: stats.samples,
    expectedSamples: Math.round(seconds * 10 * meta.sensors.length),
    batches: stats.batches,
    missedTicks: stats.missedTicks,
    spoolBytes: fs.statSync(path.join(spoolDir, 'bench.spool')).size,
    exitCode: code,
    node: process.version,
    cpus: os.cpus().length,
  };
  log(JSON.stringify(result, null, 2));
  log(
    `\nagent at 10 Hz on ${result.sensors.length} sensors for ${seconds} s: CPU ${result.steadyCpuPercentOfOneCore} % of one core ` +
      `(steady state; ${result.wholeRunCpuPercentOfOneCore} % with start-up), max RSS ${result.maxRssMB} MB ` +
      `— target < 1 % and < 50 MB: ${result.steadyCpuPercentOfOneCore < 1 && result.maxRssMB < 50 ? 'met' : 'NOT met'}`,
  );
  if (opts.json) console.log(JSON.stringify({ ...result, warmupSeconds: warmup, ...spoolCounts(path.join(spoolDir, 'bench.spool')) }));
  fs.rmSync(work, { recursive: true, force: true });
}

/** What the spool holds: its batches, and the samples in them per sensor (t and v of equal length). */
function spoolCounts(file) {
  const bySensor = {};
  let batches = 0;
  let samples = 0;
  let unevenColumns = 0;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    batches += 1;
    for (const column of JSON.parse(line).samples) {
      bySensor[column.sensor] = (bySensor[column.sensor] ?? 0) + column.t.length;
      samples += column.t.length;
      if (column.v.length !== column.t.length) unevenColumns += 1;
    }
  }
  return { spool: { batches, samples, bySensor, unevenColumns } };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
