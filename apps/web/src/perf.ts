// Performance marks the benchmark reads (bench/queue-view.js): when the queue request started and
// ended, and when the table first rendered rows. Names are fixed so the benchmark can find them.
export const PERF = {
  queueFetchStart: 'erg:queue-fetch-start',
  queueFetchEnd: 'erg:queue-fetch-end',
  queueTableRendered: 'erg:queue-table-rendered',
  queueFetch: 'erg:queue-fetch',
  queueFirstRender: 'erg:queue-first-render',
} as const;
