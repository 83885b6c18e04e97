// Every example under examples/ is a valid campaign, checked with the same function the API uses.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { renderTemplate } from '@erg/spec';
import { validateCampaignText } from '@erg/sweep';
import { repoRoot } from '@erg/testkit';

const dir = path.join(repoRoot(), 'examples');
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));

test('there are examples', () => {
  expect(files).toEqual(expect.arrayContaining(['quickstart.yaml', 'gh200-deepspeed-energy.yaml']));
});

test.each(files)('%s validates', (file) => {
  const result = validateCampaignText(readFileSync(path.join(dir, file), 'utf8'), 'yaml', { maxRuns: 10_000 });
  expect(result.ok ? [] : result.issues).toEqual([]);
});

test('the GH200 study sweeps 36 configurations with ds_config.json rendered per run and its phase hooks staged as written', () => {
  const result = validateCampaignText(readFileSync(path.join(dir, 'gh200-deepspeed-energy.yaml'), 'utf8'), 'yaml', { maxRuns: 10_000 });
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  expect(result.configurations).toHaveLength(36);
  expect(result.spec.repetitions).toBe(3);
  expect(Object.keys(result.spec.files).sort()).toEqual(['ds_config.json', 'erg_ds_phases.py']);
  // The DeepSpeed hooks have no template in them: every run stages the same Python, marking the same phases.
  const hooks = result.spec.files['erg_ds_phases.py']!;
  expect(renderTemplate(hooks, { ...result.configurations[0]!.parameters, run_id: 'r', campaign_id: 'c', repetition: 1 })).toBe(hooks);
  for (const phase of ['forward', 'backward', 'optimizer_step', 'offload_fetch', 'offload_cpu_adam']) expect(hooks).toContain(`"${phase}"`);
  // The workload is erg's reference training script, from the erg checkout at workloadDir.
  expect(result.spec.workloadDir).toBeDefined();
  expect(result.spec.run).toContain('python -m erg_ds_phases "$ERG_WORKLOAD_DIR/examples/multimodal/train_multimodal.py"');
  expect(existsSync(path.join(repoRoot(), 'examples', 'multimodal', 'train_multimodal.py'))).toBe(true);
  expect(result.spec.metrics.find((m) => m.work)?.name).toBe('steps');
  // Every configuration's rendered ds_config.json is valid JSON with its offload devices.
  for (const c of result.configurations) {
    const config = JSON.parse(renderTemplate(result.spec.files['ds_config.json']!, { ...c.parameters, run_id: 'r', campaign_id: 'c', repetition: 1 }));
    expect(config.zero_optimization.offload_optimizer.device).toBe(c.parameters.opt_device);
    expect(config.activation_checkpointing.partition_activations).toBe(c.parameters.checkpointing);
  }
});
