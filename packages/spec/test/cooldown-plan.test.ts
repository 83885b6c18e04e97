import { Cooldown, cooldownPlanText, MAX_COOLDOWN_REFERENCES, parseCooldownPlan, type CooldownPlan } from '../src';

// erg.cooldown: what the scheduler stages and every agent reads, without zod on the agent's side.

const thresholds = Cooldown.parse({});
const plan: CooldownPlan = {
  ergCooldown: 1, ...thresholds,
  references: [{ node: 'gh-001', powerW: 412.5, gpus: [{ gpu: 0, tempC: 31.5 }], runId: 'r1', measuredAt: '2026-12-08T09:00:00.000Z' }],
};

describe('the cooldown plan', () => {
  test('what cooldownPlanText writes, parseCooldownPlan reads back, the spec block\'s defaults included', () => {
    expect(thresholds).toEqual({ powerMargin: 0.1, tempMarginC: 5, settleS: 5, maxWaitS: 120 });
    expect(parseCooldownPlan(cooldownPlanText(plan))).toEqual({ ok: true, plan });
  });

  test('a plan outside the spec block\'s ranges, of another format, or not JSON is refused with the reason', () => {
    expect(parseCooldownPlan('{')).toEqual({ ok: false, reason: 'not JSON' });
    expect(parseCooldownPlan(JSON.stringify({ ...plan, ergCooldown: 2 }))).toEqual({ ok: false, reason: 'not a cooldown plan (ergCooldown 1)' });
    expect(parseCooldownPlan(JSON.stringify({ ...plan, settleS: 0.5 }))).toEqual({ ok: false, reason: 'settleS must be a number in [1, 600]' });
    expect(parseCooldownPlan(JSON.stringify({ ...plan, maxWaitS: '60' }))).toEqual({ ok: false, reason: 'maxWaitS must be a number in [1, 3600]' });
  });

  test('references: one without a node name is left out, a bad power or GPU is read as unknown, and at most MAX_COOLDOWN_REFERENCES are kept', () => {
    const references = [
      { powerW: 1 },
      { node: 'a', powerW: -3, gpus: [{ gpu: 0.5, tempC: 30 }, { gpu: 1, tempC: 'hot' }, { gpu: 2, tempC: 33 }] },
      ...Array.from({ length: MAX_COOLDOWN_REFERENCES + 5 }, (_, i) => ({ node: `n${i}`, powerW: 100, gpus: [] })),
    ];
    const parsed = parseCooldownPlan(JSON.stringify({ ...plan, references }));
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.plan.references).toHaveLength(MAX_COOLDOWN_REFERENCES - 1);
    expect(parsed.plan.references[0]).toEqual({ node: 'a', powerW: null, gpus: [{ gpu: 2, tempC: 33 }], runId: '', measuredAt: '' });
  });
});
