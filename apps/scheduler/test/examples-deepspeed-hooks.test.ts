// examples/gh200-deepspeed-energy.yaml's erg_ds_phases.py, run as the example runs it
// (`python -m erg_ds_phases SCRIPT ARGS…`) against a stand-in `deepspeed` package: a fixture with
// only the entry points the hooks wrap (deepspeed.initialize returning an engine with forward /
// backward / step, ZeRO-3's PartitionedParameterCoordinator.fetch_sub_module, DeepSpeedCPUAdam.step),
// not DeepSpeed. What it proves: the training script runs unchanged and the marks it leaves are
// the phases the example promises, nested and counted as DeepSpeed calls them.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MARK_TOOL_FILES } from '@erg/agent';
import { decodeCampaignText, parseMarkLine } from '@erg/spec';
import { repoRoot } from '@erg/testkit';

const FAKE_DEEPSPEED: Record<string, string> = {
  'deepspeed/__init__.py': [
    'class Engine:',
    '    def forward(self, x):',
    '        from deepspeed.runtime.zero.partitioned_param_coordinator import PartitionedParameterCoordinator',
    '        PartitionedParameterCoordinator().fetch_sub_module("layer")',
    '        return x * 2',
    '    def backward(self, loss):',
    '        return None',
    '    def step(self):',
    '        from deepspeed.ops.adam import DeepSpeedCPUAdam',
    '        DeepSpeedCPUAdam().step()',
    'def initialize(*args, **kwargs):',
    '    return Engine(), None, None, None',
  ].join('\n'),
  'deepspeed/runtime/__init__.py': '',
  'deepspeed/runtime/zero/__init__.py': '',
  'deepspeed/runtime/zero/partitioned_param_coordinator.py': 'class PartitionedParameterCoordinator:\n    def fetch_sub_module(self, m):\n        return m\n',
  'deepspeed/ops/__init__.py': '',
  'deepspeed/ops/adam.py': 'class DeepSpeedCPUAdam:\n    def step(self):\n        return None\n',
};

const TRAIN = [
  'import sys, deepspeed',
  'engine, _, _, _ = deepspeed.initialize(args=None)',
  'for _ in range(int(sys.argv[1])):',
  '    loss = engine.forward(1)',
  '    engine.backward(loss)',
  '    engine.step()',
  'print("trained", sys.argv[1:])',
].join('\n');

test('python -m erg_ds_phases runs the training script unchanged and marks forward, backward, the optimizer step, the offload transfers and one step per engine.step()', () => {
  const decoded = decodeCampaignText(readFileSync(path.join(repoRoot(), 'examples', 'gh200-deepspeed-energy.yaml'), 'utf8'), 'yaml');
  if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
  const spec = decoded.raw as { files: Record<string, string> };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'erg-ds-hooks-'));
  try {
    const site = path.join(dir, 'site');
    for (const [file, text] of Object.entries(FAKE_DEEPSPEED)) {
      mkdirSync(path.dirname(path.join(site, file)), { recursive: true });
      writeFileSync(path.join(site, file), text);
    }
    const run = path.join(dir, 'run');
    const marks = path.join(dir, 'telemetry');
    mkdirSync(run);
    mkdirSync(marks);
    writeFileSync(path.join(run, 'erg_ds_phases.py'), spec.files['erg_ds_phases.py']);
    writeFileSync(path.join(run, 'train_multimodal.py'), TRAIN);
    const ergModule = path.dirname(MARK_TOOL_FILES.find((f) => f.relPath === 'python/erg.py')!.source);
    const r = spawnSync('python3', ['-m', 'erg_ds_phases', 'train_multimodal.py', '3', '--deepspeed', 'ds_config.json'], {
      cwd: run, encoding: 'utf8', env: { PATH: process.env.PATH, PYTHONPATH: `${ergModule}:${site}`, ERG_MARKS_DIR: marks }, timeout: 30_000,
    });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toContain("trained ['3', '--deepspeed', 'ds_config.json']");
    const [file] = readdirSync(marks);
    const lines = readFileSync(path.join(marks, file!), 'utf8').trimEnd().split('\n').map((l) => parseMarkLine(l)!);
    const seen = lines.map((m) => `${m.kind} ${m.name}`);
    // One iteration: forward (with a parameter fetch inside), backward, the optimizer step (with
    // the CPU Adam step inside), then the step mark.
    expect(seen.slice(0, 10)).toEqual([
      'begin forward', 'begin offload_fetch', 'end offload_fetch', 'end forward',
      'begin backward', 'end backward',
      'begin optimizer_step', 'begin offload_cpu_adam', 'end offload_cpu_adam', 'end optimizer_step',
    ]);
    expect(seen.filter((s) => s === 'step step')).toHaveLength(3);
    expect(seen.filter((s) => s === 'begin forward')).toHaveLength(3);
    expect(lines.every((m) => m.writer === 'py' && m.monoNs !== null)).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
