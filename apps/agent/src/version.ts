/** The agent's version; kept equal to package.json's by a test (the bundle cannot read package.json). */
export const AGENT_VERSION = '0.1.0';
