// Jest's test sequencer (jest.config.js) for the e2e project. Files of the slots that run several at
// once start longest first, by the plan's estimate (scripts/e2e-plan.js `minutes`): Jest's own
// order falls back to file size on a fresh clone (no timing cache yet), which would leave a long,
// small file such as site-limits.e2e.test.ts to run alone at the end of its slot. Files of the
// one-at-a-time slots (serial, quiet) run in the plan's order: chaos.e2e last, since a cluster is
// slow to answer for a while after its faults (controller-hang took twice as long after it).
'use strict';

const Sequencer = require('@jest/test-sequencer').default;
const path = require('node:path');
const { E2E_PLAN, plannedMinutes } = require('./e2e-plan.js');

const ONE_AT_A_TIME = new Set(['serial', 'quiet']);
const PLAN_ORDER = Object.keys(E2E_PLAN);

const root = path.resolve(__dirname, '..');

class E2eSequencer extends Sequencer {
  sort(tests) {
    const file = (test) => path.relative(root, test.path);
    // Unit and integration runs (no file of theirs is planned) keep Jest's own order.
    if (!tests.some((t) => E2E_PLAN[file(t)])) return super.sort(tests);
    const key = (test) => (ONE_AT_A_TIME.has(E2E_PLAN[file(test)]?.slot) ? PLAN_ORDER.indexOf(file(test)) : -plannedMinutes(file(test)));
    return [...tests].sort((a, b) => key(a) - key(b) || a.path.localeCompare(b.path));
  }
}

module.exports = E2eSequencer;
