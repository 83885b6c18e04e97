#!/usr/bin/env node
// FIXTURE WRITER — the multi-node local cluster's power meters (deploy/local-slurm/multinode).
//
// There are no GH200 nodes here, so each node of the cluster gets a fixture tree laid out like a
// GH200 node's /sys/class/hwmon (copied from apps/agent/test/fixtures/gh200: ACPI power meters
// labelled Module/Grace/CPU/SysIO Power Socket 0), mounted at /sys/class/hwmon in the node's own
// mount namespace (node-boot.sh). This process keeps every node's power1_average files current
// from the node's real load: the CPU time of the processes in the node's network namespace — its
// slurmd, the job steps it started and everything they run — so a busy node draws more than an
// idle one, and the nodes differ from each other by a fixed offset and efficiency each (a node
// effect a campaign can find). The model (watts, per node k = 0 … n-1, busy = CPU-seconds per second):
//   cpu    = (40 + 3k)  + 30 (1 + 0.05k) · busy        "CPU Power Socket 0"
//   sysio  = (20 + k)   +  2 · busy                    "SysIO Power Socket 0"
//   grace  = cpu + sysio + (15 + 2 · busy)             "Grace Power Socket 0" (the DRAM share: grace − cpu − sysio)
//   module = grace + (90 + 2k)                         "Module Power Socket 0" (an idle Hopper GPU; no GPU work runs here)
// Each value is an average over the last tick (power1_average_interval = the tick), written in
// place (the agent keeps the file open and re-reads it with pread, as it does real sysfs).
//
// Usage: node sensors.js <nodes dir> <tick ms> <node>=<netns path> …
//   e.g. node sensors.js /var/lib/erg-local/multinode/nodes 250 gh-001=/run/netns/gh-001 …
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const [nodesDir, tickArg, ...nodeArgs] = process.argv.slice(2);
const tickMs = Number(tickArg);
if (!nodesDir || !Number.isInteger(tickMs) || tickMs < 10 || nodeArgs.length === 0) {
  console.error('usage: node sensors.js <nodes dir> <tick ms> <node>=<netns path> …');
  process.exit(2);
}
const TICKS_PER_S = 100; // USER_HZ: /proc/<pid>/stat counts CPU time in these on Linux

const METERS = { module: 'Module Power Socket 0', grace: 'Grace Power Socket 0', cpu: 'CPU Power Socket 0', sysio: 'SysIO Power Socket 0' };

/** A node: its netns inode (how its processes are recognised) and its four meter files. */
function openNode(spec, k) {
  const eq = spec.indexOf('=');
  const name = spec.slice(0, eq);
  const netns = spec.slice(eq + 1);
  const hwmon = path.join(nodesDir, name, 'sys/class/hwmon');
  const files = {};
  for (const entry of fs.readdirSync(hwmon)) {
    const label = path.join(hwmon, entry, 'device/power1_oem_info');
    if (!fs.existsSync(label)) continue;
    const text = fs.readFileSync(label, 'utf8').trim();
    const meter = Object.keys(METERS).find((m) => METERS[m] === text);
    if (!meter) continue;
    fs.writeFileSync(path.join(hwmon, entry, 'device/power1_average_interval'), `${tickMs}\n`);
    files[meter] = fs.openSync(path.join(hwmon, entry, 'device/power1_average'), 'r+');
  }
  for (const m of Object.keys(METERS)) if (files[m] === undefined) throw new Error(`${hwmon}: no meter labelled "${METERS[m]}"`);
  return { name, k, netns, ino: null, files, busy: 0, lengths: {} };
}

const nodes = nodeArgs.map(openNode);

/** The namespace's inode, as /proc/<pid>/ns/net names it ("net:[<ino>]"); null while it does not exist. */
function netnsLink(node) {
  try {
    return `net:[${fs.statSync(node.netns).ino}]`;
  } catch {
    return null;
  }
}

/** pid → its node (or null: not a node's) — a process never changes network namespace here. */
const owner = new Map();
/** pid → its CPU ticks (utime + stime) at the last tick. */
const lastTicks = new Map();

function cpuTicks(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
  } catch {
    return null;
  }
}

function tick(elapsedS) {
  const links = new Map(nodes.map((n) => [netnsLink(n), n]));
  links.delete(null);
  const used = new Map(nodes.map((n) => [n, 0]));
  const seen = new Set();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    seen.add(pid);
    let node = owner.get(pid);
    if (node === undefined) {
      let link = null;
      try {
        link = fs.readlinkSync(`/proc/${pid}/ns/net`);
      } catch {}
      node = links.get(link) ?? null;
      owner.set(pid, node);
    }
    if (node === null) continue;
    const ticks = cpuTicks(pid);
    if (ticks === null) continue;
    // A process first seen now started within the last tick (or the emulator just started): all of its time is new.
    const before = lastTicks.get(pid) ?? (elapsedS === null ? ticks : 0);
    used.set(node, used.get(node) + Math.max(0, ticks - before));
    lastTicks.set(pid, ticks);
  }
  for (const pid of owner.keys()) {
    if (!seen.has(pid)) {
      owner.delete(pid);
      lastTicks.delete(pid);
    }
  }
  if (elapsedS === null) return;
  for (const node of nodes) {
    node.busy = used.get(node) / TICKS_PER_S / elapsedS;
    write(node);
  }
}

function watts(node) {
  const { k, busy } = node;
  const cpu = 40 + 3 * k + 30 * (1 + 0.05 * k) * busy;
  const sysio = 20 + k + 2 * busy;
  const grace = cpu + sysio + 15 + 2 * busy;
  const module = grace + 90 + 2 * k;
  return { module, grace, cpu, sysio };
}

const buffer = Buffer.alloc(32);
function write(node) {
  for (const [meter, w] of Object.entries(watts(node))) {
    // In place: the new digits and newline over the old, then the file cut to them. A reader in
    // between sees the new number followed by old bytes after its newline, which it ignores.
    const n = buffer.write(`${Math.round(w * 1000) * 1000}\n`, 0, 'latin1');
    fs.writeSync(node.files[meter], buffer, 0, n, 0);
    if (node.lengths[meter] !== n) fs.ftruncateSync(node.files[meter], n);
    node.lengths[meter] = n;
  }
}

let last = null;
function loop() {
  const now = performance.now();
  try {
    tick(last === null ? null : (now - last) / 1000);
  } catch (err) {
    console.error(`sensors.js: ${err.stack ?? err}`);
  }
  last = now;
}
for (const node of nodes) write(node);
loop();
setInterval(loop, tickMs);
process.on('SIGTERM', () => process.exit(0));
