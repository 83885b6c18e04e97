import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AGENT_RUNTIME_VENDOR_DIR, readRuntimeManifest } from '../src/runtime';
import { AGENT_DIR } from './helpers';

// The runtime erg stages where nodes have no Node.js (docs/operations.md § The agent's runtime):
// pinned exactly, the koffi the agent is built against, and vendored as the lock says.

const runtimePkg = JSON.parse(fs.readFileSync(path.join(AGENT_DIR, 'runtime', 'package.json'), 'utf8'));
const runtimeLock = JSON.parse(fs.readFileSync(path.join(AGENT_DIR, 'runtime', 'package-lock.json'), 'utf8'));
const rootLock = JSON.parse(fs.readFileSync(path.join(AGENT_DIR, '..', '..', 'package-lock.json'), 'utf8'));
const agentPkg = JSON.parse(fs.readFileSync(path.join(AGENT_DIR, 'package.json'), 'utf8'));

describe("the agent's staged runtime", () => {
  test('every package is pinned to one exact version, and the lock says the same', () => {
    for (const [name, range] of Object.entries(runtimePkg.optionalDependencies as Record<string, string>)) {
      expect({ name, range }).toEqual({ name, range: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
      expect(runtimeLock.packages[`node_modules/${name}`]).toMatchObject({ version: range, integrity: expect.stringMatching(/^sha512-/) });
    }
  });

  test("its koffi is the agent's koffi, and its native modules are that koffi's", () => {
    const koffi = agentPkg.dependencies.koffi;
    expect(rootLock.packages['node_modules/koffi'].version).toBe(koffi);
    expect(runtimePkg.optionalDependencies.koffi).toBe(koffi);
    for (const cpu of ['x64', 'arm64']) {
      expect(runtimePkg.optionalDependencies[`@koromix/koffi-linux-${cpu}`]).toBe(runtimeLock.packages['node_modules/koffi'].optionalDependencies[`@koromix/koffi-linux-${cpu}`]);
    }
  });

  test('the vendored tarballs are the locked ones, and the manifest pins their sha256 and versions', () => {
    const manifest = readRuntimeManifest();
    expect(Object.keys(manifest.platforms).sort()).toEqual(['linux-arm64', 'linux-x64']);
    for (const [platform, m] of Object.entries(manifest.platforms)) {
      expect(m.node).toBe(runtimePkg.optionalDependencies[`node-${platform}`]);
      expect(m.koffi).toBe(runtimePkg.optionalDependencies.koffi);
      expect(m.tarballs.map((t) => t.package).sort()).toEqual(['@koromix/koffi-' + platform, 'koffi', `node-${platform}`].sort());
      for (const t of m.tarballs) {
        const bytes = fs.readFileSync(path.join(AGENT_RUNTIME_VENDOR_DIR, t.file));
        expect({ file: t.file, integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}` }).toEqual({ file: t.file, integrity: runtimeLock.packages[`node_modules/${t.package}`].integrity });
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(t.sha256);
      }
      expect(m.files.map((f) => f.path)).toContain('bin/node');
    }
  });
});
