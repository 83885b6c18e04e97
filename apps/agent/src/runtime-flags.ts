import v8 from 'node:v8';

// Imported first by the agent's entry point (main.ts), before any other module runs.
//
// The agent's hot path is a few syscalls per tick; V8's optimizing tiers (Maglev, TurboFan) buy
// it nothing measurable, but once functions turn hot they page in several MB of compiler code and
// data — about 5 MB of the agent's RSS budget of 50 MB (bench/agent-overhead.js: 52 MB → 47 MB at
// 10 Hz over 60 s, CPU unchanged). Node cannot be given flags on the command line here (the job
// script runs plain `node erg-agent.js`), so they are set at start-up; both only decide whether
// to tier up, which is safe to change at run time.
v8.setFlagsFromString('--no-opt');
v8.setFlagsFromString('--no-maglev');
