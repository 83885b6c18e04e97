import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AGENT_RUNTIME_VENDOR_DIR, readRuntimeManifest, type RuntimeManifest, type RuntimePlatformManifest } from '@erg/agent';
import { SlurmCommandError, shellQuote } from '@erg/slurm';
import { DEFAULT_RUN_UMASK, maskedMode, type RuntimePlatform } from '@erg/spec';
import type { ClusterLink } from './connections';

/** Where a job finds the staged runtime: the Node.js binary and the folder koffi resolves from (NODE_PATH). */
export interface StagedRuntime {
  node: string;
  nodePath: string;
}

/** Minutes after which another stager's temporary folder counts as abandoned (staging takes seconds). */
const STALE_STAGING_MIN = 60;

/** Seconds the login node may take to check and unpack a runtime (two ~50 MB tarballs' worth of gunzip and sha256). */
const UNPACK_TIMEOUT_MS = 120_000;

/**
 * erg's own agent runtime (apps/agent/runtime: Node.js and koffi with its native module, per
 * platform), staged once per runtime folder under a name that carries its content id:
 * `<runtimeDir>/<platform>-<id>/{bin/node, node_modules/…}`. Staging is atomic: the tarballs go
 * to a temporary folder beside it, the login node checks their sha256, unpacks them, checks the
 * unpacked files' sha256 and only then renames the folder into place — a crash or a failed check
 * at any point leaves no folder under the final name, which is the only one jobs use. Clusters and
 * schedulers that share the folder stage it once; a concurrent stager that loses the rename
 * throws its copy away.
 */
export class RuntimeStager {
  private readonly manifest: RuntimeManifest;
  /** Tarballs whose bytes matched the manifest in this process (checked before their first upload). */
  private readonly checked = new Map<string, Buffer>();
  /** `<cluster id>|<folder>` already known staged by this process. */
  private readonly staged = new Set<string>();

  constructor(
    private readonly umask: number = DEFAULT_RUN_UMASK,
    private readonly vendorDir: string = AGENT_RUNTIME_VENDOR_DIR,
  ) {
    this.manifest = readRuntimeManifest(vendorDir);
  }

  /** The Node.js version vendored per platform (what `staged` would run). */
  versions(): Partial<Record<RuntimePlatform, string>> {
    return Object.fromEntries(Object.entries(this.manifest.platforms).map(([p, m]) => [p, m.node]));
  }

  /** The staged folder's path for a platform under `runtimeDir`. */
  folder(runtimeDir: string, platform: RuntimePlatform): string {
    return `${runtimeDir}/${platform}-${this.platform(platform).id}`;
  }

  /** Makes sure the platform's runtime is staged under `runtimeDir` (checked, complete) and says where. */
  async ensureStaged(clusterId: string, link: ClusterLink, runtimeDir: string, platform: RuntimePlatform): Promise<StagedRuntime> {
    const dir = this.folder(runtimeDir, platform);
    const where = { node: `${dir}/bin/node`, nodePath: `${dir}/node_modules` };
    const key = `${clusterId}|${dir}`;
    if (this.staged.has(key)) return where;
    const present = await link.connection.exec(`test -x ${shellQuote(where.node)}`);
    if (present.code !== 0) await this.stage(link, runtimeDir, dir, this.platform(platform));
    this.staged.add(key);
    return where;
  }

  private platform(platform: RuntimePlatform): RuntimePlatformManifest {
    const m = this.manifest.platforms[platform];
    if (!m) throw new Error(`the vendored agent runtime has no ${platform} (apps/agent/build-runtime.js)`);
    return m;
  }

  /** The tarball's bytes, checked against the manifest's sha256 before they leave this machine. */
  private tarball(file: string, sha256: string): Buffer {
    const known = this.checked.get(file);
    if (known) return known;
    const bytes = readFileSync(path.join(this.vendorDir, file));
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== sha256) throw new Error(`${path.join(this.vendorDir, file)} has sha256 ${actual}, the manifest says ${sha256}: vendor it again (node apps/agent/build-runtime.js)`);
    this.checked.set(file, bytes);
    return bytes;
  }

  private async stage(link: ClusterLink, runtimeDir: string, dir: string, m: RuntimePlatformManifest): Promise<void> {
    const tmp = `${runtimeDir}/.staging-${path.posix.basename(dir)}-${randomUUID().slice(0, 8)}`;
    const files = [
      ...m.tarballs.map((t) => ({ name: t.file, content: this.tarball(t.file, t.sha256), mode: 0o644 })),
      { name: 'tarballs.sha256', content: m.tarballs.map((t) => `${t.sha256}  ${t.file}\n`).join(''), mode: 0o644 },
      { name: 'files.sha256', content: m.files.map((f) => `${f.sha256}  ${f.path}\n`).join(''), mode: 0o644 },
    ];
    await link.connection.writeFiles(tmp, files.map((f) => ({ ...f, mode: maskedMode(f.mode, this.umask) })), { dirMode: maskedMode(0o777, this.umask) });
    const result = await link.connection.exec(unpackCommand(tmp, dir, m, this.umask), { timeoutMs: UNPACK_TIMEOUT_MS });
    if (result.code !== 0) throw new SlurmCommandError(`staging the agent runtime in ${dir}`, result.code, result.stderr);
  }
}

/**
 * The login node's half of staging, as one `sh -c`: check the uploaded tarballs, unpack them into
 * `rt`, check what was unpacked, rename `rt` to the final folder (mv -T: rename(2), fails when the
 * folder exists — another stager was first, and its copy passed the same checks), and remove the
 * temporary folder whatever happened.
 */
export function unpackCommand(tmp: string, dir: string, m: RuntimePlatformManifest, umask: number): string {
  const q = shellQuote;
  const unpack = m.tarballs.map((t) => {
    const into = t.into === '.' ? 'rt' : `rt/${t.into}`;
    return `mkdir -p ${q(into)} && tar -xzf ${q(t.file)} -C ${q(into)} --no-same-owner --no-same-permissions --strip-components=${t.strip}${(t.members ?? []).map((x) => ` ${q(x)}`).join('')}`;
  });
  const script = [
    `umask ${umask.toString(8).padStart(3, '0')}`,
    `trap 'cd / && rm -rf ${q(tmp)}' EXIT`,
    // What a stager that died before its trap ran (a killed scheduler, a dropped connection mid-upload) left behind.
    `find ${q(path.posix.dirname(tmp))} -maxdepth 1 -name '.staging-*' -mmin +${STALE_STAGING_MIN} -exec rm -rf {} + 2>/dev/null`,
    `cd ${q(tmp)}`,
    'sha256sum -c --quiet tarballs.sha256 >&2 || { echo "the uploaded runtime tarballs do not match their sha256" >&2; exit 3; }',
    ...unpack.map((line) => `${line} || exit 4`),
    '(cd rt && sha256sum -c --quiet ../files.sha256) >&2 || { echo "the unpacked runtime does not match its sha256" >&2; exit 5; }',
    `mv -T rt ${q(dir)} 2>/dev/null || test -x ${q(`${dir}/bin/node`)} || { echo "could not move the runtime to ${dir}" >&2; exit 6; }`,
  ].join('\n');
  return `sh -c ${q(script)}`;
}
