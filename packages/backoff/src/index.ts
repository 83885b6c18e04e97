// @erg/backoff — how long to wait before retrying something that failed (an SSH connect, the web
// app's event stream, the agent's telemetry push). Pure and dependency-free: it is bundled into
// the browser app and into the agent's single file.
export { Backoff, backoffDelay, DEFAULT_JITTER, type BackoffOptions } from './backoff';
