import type { RuntimeProbe } from '@erg/slurm';
import { chooseAgentRuntime, nodeVersionOf, platformOfArch } from '../src/agent-runtime';

// Which Node.js a cluster's agents start with, chosen from the probe: the cluster's agentCommand
// where it is Node.js 18+ on the nodes' architecture, erg's staged runtime otherwise, or what the
// cluster's agentRuntime setting forces.

const staged = { 'linux-x64': '22.23.5', 'linux-arm64': '22.23.5' } as const;
const gh200 = (command: RuntimeProbe['command'], over: Partial<RuntimeProbe> = {}): RuntimeProbe => ({
  host: 'gh-001', hostArch: 'aarch64', command, nodeArchs: [{ arch: 'aarch64', nodes: 4, example: 'gh-001' }], ...over,
});

describe("choosing the agents' runtime", () => {
  test('auto, Node.js 20 answering on nodes of the same architecture: agentCommand', () => {
    expect(chooseAgentRuntime('auto', 'node', gh200({ exitCode: 0, output: 'v20.20.2' }), staged)).toEqual({
      use: 'command', platform: null, node: '20.20.2', reason: 'agentCommand `node` is Node.js 20.20.2 on gh-001', problem: null,
      nodeArchs: [{ arch: 'aarch64', nodes: 4, example: 'gh-001' }],
    });
  });

  test('auto, no node on the nodes: the staged runtime for their architecture, and the reason names the command and the host', () => {
    expect(chooseAgentRuntime('auto', 'node', gh200({ exitCode: 127, output: 'sh: 1: node: not found' }), staged)).toMatchObject({
      use: 'staged', platform: 'linux-arm64', node: '22.23.5', reason: 'staged Node.js 22.23.5 linux-arm64: agentCommand `node` not found on gh-001 (exit 127)', problem: null,
    });
  });

  test('auto, a Node.js older than 18, or something that is not Node.js: staged', () => {
    expect(chooseAgentRuntime('auto', 'node', gh200({ exitCode: 0, output: 'v16.20.2' }), staged).reason).toBe(
      'staged Node.js 22.23.5 linux-arm64: agentCommand `node` is Node.js 16.20.2 on gh-001, older than 18',
    );
    expect(chooseAgentRuntime('auto', '/usr/bin/python3', gh200({ exitCode: 0, output: 'Python 3.11.2' }), staged)).toMatchObject({ use: 'staged', reason: expect.stringContaining('answered "Python 3.11.2" (exit 0), not a Node.js version') });
  });

  test('auto, Node.js on an x86-64 login node in front of aarch64 nodes: staged for the nodes, not the login node', () => {
    const choice = chooseAgentRuntime('auto', 'node', gh200({ exitCode: 0, output: 'v22.1.0' }, { host: 'login1', hostArch: 'x86_64' }), staged);
    expect(choice).toMatchObject({ use: 'staged', platform: 'linux-arm64' });
    expect(choice.reason).toContain('the login node is x86_64 and the nodes (e.g. gh-001) are aarch64');
  });

  test('forced: command keeps agentCommand even when it is missing; staged stages even where Node.js answers', () => {
    expect(chooseAgentRuntime('command', 'node', gh200({ exitCode: 127, output: '' }), staged)).toMatchObject({ use: 'command', node: null, reason: 'agentRuntime is "command": agentCommand `node` not found on gh-001 (exit 127)' });
    expect(chooseAgentRuntime('staged', 'node', gh200({ exitCode: 0, output: 'v20.0.0' }), staged)).toMatchObject({ use: 'staged', platform: 'linux-arm64', reason: 'staged Node.js 22.23.5 linux-arm64: agentRuntime is "staged"' });
  });

  test('an architecture erg ships no runtime for: agentCommand, with the problem said', () => {
    const choice = chooseAgentRuntime('auto', 'node', gh200({ exitCode: 127, output: '' }, { hostArch: 'ppc64le', nodeArchs: [{ arch: 'ppc64le', nodes: 2, example: 'p9-01' }] }), staged);
    expect(choice).toMatchObject({ use: 'command', problem: 'no staged runtime for ppc64le: install Node.js 18+ on the nodes and set agentCommand' });
    expect(choice.reason).toContain('erg ships no runtime for ppc64le (nodes such as p9-01)');
  });

  test('nodes of several architectures: the most common one, and the problem said', () => {
    const choice = chooseAgentRuntime('auto', 'node', gh200({ exitCode: 127, output: '' }, {
      nodeArchs: [{ arch: 'aarch64', nodes: 4, example: 'gh-001' }, { arch: 'x86_64', nodes: 1, example: 'viz-01' }],
    }), staged);
    expect(choice).toMatchObject({ use: 'staged', platform: 'linux-arm64' });
    expect(choice.problem).toMatch(/several architectures \(aarch64 ×4, x86_64 ×1\)/);
  });

  test("no nodes in Slurm's answer: the login node's architecture stands in", () => {
    expect(chooseAgentRuntime('auto', 'node', gh200({ exitCode: 127, output: '' }, { hostArch: 'x86_64', nodeArchs: [] }), staged)).toMatchObject({
      platform: 'linux-x64', nodeArchs: [{ arch: 'x86_64', nodes: 1, example: 'gh-001' }],
    });
  });

  test('platforms and versions read strictly', () => {
    expect([platformOfArch('x86_64'), platformOfArch('aarch64'), platformOfArch('arm64'), platformOfArch('riscv64')]).toEqual(['linux-x64', 'linux-arm64', 'linux-arm64', null]);
    expect([nodeVersionOf(0, 'v22.23.5\n'), nodeVersionOf(1, 'v22.23.5'), nodeVersionOf(0, 'v22'), nodeVersionOf(0, 'node v22.1.0')]).toEqual(['22.23.5', null, null, null]);
  });
});
