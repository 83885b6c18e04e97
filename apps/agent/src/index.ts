// @erg/agent — the telemetry agent erg starts on every node of a job. It ships as ONE file,
// dist/erg-agent.js (esbuild bundle, runs with plain `node`, no node_modules), which the
// scheduler stages beside the job script. This module is for the rest of erg: where that file
// is, its version, and the wire types.
import path from 'node:path';

/** Absolute path of the self-contained bundle (built by `npm run build -w @erg/agent`). */
export const AGENT_BUNDLE_PATH = path.resolve(__dirname, '..', 'dist', 'erg-agent.js');

export { AGENT_VERSION } from './version';
export type { Component, Quantity, SampleColumn, SensorInfo, SourceName, TelemetryAck, TelemetryBatch, Unit } from './wire';
export { QUANTITY_UNITS, SOURCE_NAMES, sensorName } from './wire';
export { AgentConfig, parseCommandLine, USAGE, ConfigError } from './config';
export { startAgent, AgentStartError, type AgentHandle } from './agent';
export type { AgentStats } from './agent-stats';
export { MARK_TOOL_FILES, type MarkToolFile } from './mark-tools';
export { AGENT_RUNTIME_VENDOR_DIR, readRuntimeManifest, RuntimeManifest, type RuntimePlatformManifest } from './runtime';
