// The runtime erg stages for the agent on clusters whose nodes have no Node.js 18+: vendored by
// build-runtime.js (scripts/install.sh runs it) into runtime/vendor/ — the pinned npm tarballs and
// manifest.json, which says per platform what is unpacked where and the sha256 of every tarball
// and of the files checked after unpacking. This module is for the scheduler, which stages it.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/** Where build-runtime.js puts the tarballs and the manifest. */
export const AGENT_RUNTIME_VENDOR_DIR = path.resolve(__dirname, '..', 'runtime', 'vendor');

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);
/** A relative path inside the staged folder or a tarball: no "..", nothing absolute, nothing a shell would read. */
const RelPath = z.string().regex(/^[A-Za-z0-9_@][A-Za-z0-9._@/-]*$/).refine((p) => !p.split('/').includes('..'));

const RuntimeTarball = z.object({
  file: z.string().regex(/^[A-Za-z0-9._-]+\.tgz$/),
  package: z.string(),
  version: z.string(),
  integrity: z.string().startsWith('sha512-'),
  sha256: Sha256,
  /** Where it unpacks, relative to the staged folder ("." for the folder itself). */
  into: z.union([z.literal('.'), RelPath]),
  /** The members unpacked (null: all of them), and how many leading path parts are dropped. */
  members: z.array(RelPath).nullable(),
  strip: z.int().min(0).max(4),
});

const RuntimePlatformManifest = z.object({
  /** Content id: a hash of the platform, the tarballs and the checked files. The staged folder is named after it. */
  id: z.string().regex(/^[0-9a-f]{16}$/),
  node: z.string(),
  koffi: z.string(),
  tarballs: z.array(RuntimeTarball).min(1),
  /** Checked on the login node after unpacking (sha256sum -c). */
  files: z.array(z.object({ path: RelPath, sha256: Sha256 })).min(1),
});
export type RuntimePlatformManifest = z.infer<typeof RuntimePlatformManifest>;

export const RuntimeManifest = z.object({
  schema: z.literal(1),
  platforms: z.record(z.enum(['linux-x64', 'linux-arm64']), RuntimePlatformManifest),
});
export type RuntimeManifest = z.infer<typeof RuntimeManifest>;

/** Reads and checks the manifest; a missing one says how to make it. */
export function readRuntimeManifest(dir: string = AGENT_RUNTIME_VENDOR_DIR): RuntimeManifest {
  const file = path.join(dir, 'manifest.json');
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run node apps/agent/build-runtime.js (scripts/install.sh does) to vendor the agent's runtime`);
  return RuntimeManifest.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
}
