// Jest's test sequencer (jest.config.js) for the e2e project: the files a jest run gets start longest first, by the
// plan's estimate (scripts/e2e-plan.js `minutes`). Jest's own order falls back to file size on a
// fresh clone (no timing cache yet), which would leave a long, small file such as
// site-limits.e2e.test.ts to run alone at the end of its slot.
'use strict';

const Sequencer = require('@jest/test-sequencer').default;
const path = require('node:path');
const { plannedMinutes } = require('./e2e-plan.js');

const root = path.resolve(__dirname, '..');

class E2eSequencer extends Sequencer {
  sort(tests) {
    const minutes = (test) => plannedMinutes(path.relative(root, test.path));
    // Unit and integration runs (no file of theirs is planned) keep Jest's own order.
    if (!tests.some((t) => minutes(t) > 0)) return super.sort(tests);
    return [...tests].sort((a, b) => minutes(b) - minutes(a) || a.path.localeCompare(b.path));
  }
}

module.exports = E2eSequencer;
