// @erg/web's pure logic, without React or the DOM: what the unit tests import. The React app
// lives in ./ui and uses these modules.
export * from './format';
export * from './csv';
export * from './results';
export * from './run-info';
export * from './effects';
export * from './scale';
export * from './scatter';
export * from './objectives';
export * from './pareto';
export * from './movement';
export * from './footprint';
export * from './stacked';
export * from './phases';
export * from './patterns';
export * from './series';
export * from './sse';
export * from './event-stream';
export * from './route';
export * from './queue';
export * from './perf';
export type * from './types';
export { RUN_STATES, TERMINAL_RUN_STATES, UNFINISHED_RUN_STATES } from './types';
export * from './decisions';
