/**
 * What erg finds out about a cluster by itself when it reaches it: the Slurm version on the login
 * node, whether the site's node helper (deploy/node-helper) answers at the cluster's
 * powerHelper path, with the knobs it allows, and what the agent's runtime would be (the nodes'
 * architectures as slurmd reported them, and what `<agentCommand> --version` says). One remote
 * command, bounded on the cluster.
 */
import { POWER_KNOBS, slurmVersionOf, type PowerKnob } from '@erg/spec';
import { shellQuote } from './shell';

export interface ClusterProbe {
  slurmVersion: string | null;
  /** `scontrol show config`'s MaxArraySize (an array's indices run 0..MaxArraySize-1; 0: no arrays); null when not read. */
  maxArraySize: number | null;
  /** `scontrol show config`'s MaxJobCount: the most jobs slurmctld holds at once (every array task counts); null when not read. */
  maxJobCount: number | null;
  powerHelper: { version: number; knobs: PowerKnob[] } | null;
  /** Why there is no helper, in words an admin can act on; null with a helper. */
  powerHelperProblem: string | null;
  /** What the agent would run with; absent when the probe was not asked about it. */
  runtime?: RuntimeProbe;
}

/** The facts the agent's runtime is chosen from (the scheduler's agent-runtime.ts chooses). */
export interface RuntimeProbe {
  /** The login node's host name and `uname -m`. */
  host: string;
  hostArch: string;
  /** `<agentCommand> --version` there: its exit status (127: not found) and its first line. */
  command: { exitCode: number; output: string };
  /** Per architecture (`scontrol show node`'s Arch, as each slurmd reports `uname -m`): how many nodes, and one of them. */
  nodeArchs: { arch: string; nodes: number; example: string }[];
}

/** Seconds the helper's `probe` may take on the login node. */
const HELPER_PROBE_S = 10;
/** Most bytes of the helper's answer read (one JSON line). */
const HELPER_ANSWER_BYTES = 4096;

/**
 * The probe as one shell command (one `sh -c`, so that a deadline put in front of it bounds all of
 * it); every line it prints starts with `erg-probe <what>`.
 */
export function probeCommand(helperPath: string, agentCommand?: string): string {
  const helper = shellQuote(helperPath);
  const script = [
    ...(agentCommand === undefined ? [] : runtimeProbeLines(agentCommand)),
    `printf 'erg-probe slurm %s\\n' "$(sinfo --version 2>&1 | head -n 1)"`,
    // Only the two lines erg reads; the whole config is long and says more than erg needs to keep.
    `scontrol show config 2>/dev/null | awk '$1 == "MaxArraySize" || $1 == "MaxJobCount" { print "erg-probe config", $1, $3 }'`,
    `if [ -x ${helper} ] && [ -f ${helper} ]; then` +
      ` out=$(timeout -k 2 ${HELPER_PROBE_S} ${helper} probe 2>&1 </dev/null | head -c ${HELPER_ANSWER_BYTES} | tr '\\n' ' ');` +
      ` printf 'erg-probe helper %s\\n' "$out";` +
      ` else printf 'erg-probe helper-missing\\n'; fi`,
  ].join('; ');
  return `sh -c ${shellQuote(script)}`;
}

/** Most bytes of `<agentCommand> --version` kept. */
const VERSION_ANSWER_BYTES = 200;

/**
 * The runtime's lines: the login node's name and architecture, what the agent command answers
 * there (bounded: a wrapper that hangs must not hold the probe), and the nodes' architectures,
 * one line per architecture with a count and an example node (`scontrol -o show node` prints
 * NodeName= and Arch= on every node's line in 22.05 and 24.11; `sinfo -O` has no Arch field in either).
 */
function runtimeProbeLines(agentCommand: string): string[] {
  return [
    `printf 'erg-probe host %s %s\\n' "$(hostname 2>/dev/null | head -c 200)" "$(uname -m)"`,
    `erg_v=$(timeout -k 2 10 ${shellQuote(agentCommand)} --version 2>&1 </dev/null); erg_rc=$?; printf 'erg-probe agent %s %s\\n' "$erg_rc" "$(printf '%s' "$erg_v" | head -n 1 | head -c ${VERSION_ANSWER_BYTES})"`,
    `scontrol -o show node 2>/dev/null | awk '{ n = ""; a = ""; for (i = 1; i <= NF; i++) { if ($i ~ /^NodeName=/) n = substr($i, 10); else if ($i ~ /^Arch=/) a = substr($i, 6) } if (n != "" && a != "" && a != "(null)") { c[a]++; if (!(a in e)) e[a] = n } } END { for (a in c) print "erg-probe arch", a, c[a], e[a] }'`,
  ];
}

/** The runtime's lines → RuntimeProbe; undefined when they are missing (a probe not asked about it). */
function parseRuntimeLines(lines: readonly string[]): RuntimeProbe | undefined {
  let host: { host: string; hostArch: string } | null = null;
  let command: RuntimeProbe['command'] | null = null;
  const nodeArchs: RuntimeProbe['nodeArchs'] = [];
  for (const line of lines) {
    const h = /^erg-probe host (\S*) (\S*)$/.exec(line);
    if (h) host = { host: h[1]!, hostArch: h[2]! };
    const a = /^erg-probe agent (\d+) ?(.*)$/.exec(line);
    if (a) command = { exitCode: Number(a[1]), output: a[2]!.trim() };
    const n = /^erg-probe arch (\S+) (\d+) (\S+)$/.exec(line);
    if (n) nodeArchs.push({ arch: n[1]!, nodes: Number(n[2]), example: n[3]! });
  }
  if (host === null || command === null) return undefined;
  nodeArchs.sort((x, y) => y.nodes - x.nodes || x.arch.localeCompare(y.arch));
  return { ...host, command, nodeArchs };
}

/** The probe's output → what it found. */
export function parseProbe(stdout: string, helperPath: string): ClusterProbe {
  const probe = parseHelperProbe(stdout, helperPath);
  const runtime = parseRuntimeLines(stdout.split('\n'));
  return runtime === undefined ? probe : { ...probe, runtime };
}

function parseHelperProbe(stdout: string, helperPath: string): ClusterProbe {
  let slurmVersion: string | null = null;
  let helperLine: string | null = null;
  let missing = false;
  const config: { MaxArraySize?: number; MaxJobCount?: number } = {};
  for (const line of stdout.split('\n')) {
    const c = /^erg-probe config (MaxArraySize|MaxJobCount) (\d+)$/.exec(line);
    if (c) config[c[1] as 'MaxArraySize' | 'MaxJobCount'] = Number(c[2]);
    const m = /^erg-probe (slurm|helper|helper-missing)(?: (.*))?$/.exec(line);
    if (!m) continue;
    if (m[1] === 'slurm') slurmVersion = slurmVersionOf(m[2] ?? null);
    else if (m[1] === 'helper') helperLine = (m[2] ?? '').trim();
    else missing = true;
  }
  const limits = { maxArraySize: config.MaxArraySize ?? null, maxJobCount: config.MaxJobCount ?? null };
  if (missing || helperLine === null) {
    return { slurmVersion, ...limits, powerHelper: null, powerHelperProblem: `no executable node helper at ${helperPath} on the login node (deploy/node-helper/install.sh installs it; docs/power-helper.md)` };
  }
  let answer: unknown;
  try {
    answer = JSON.parse(helperLine);
  } catch {
    answer = undefined;
  }
  const a = (answer ?? {}) as { helper?: unknown; version?: unknown; knobs?: unknown };
  if (a.helper !== 'erg-power-helper' || typeof a.version !== 'number' || !Array.isArray(a.knobs)) {
    return { slurmVersion, ...limits, powerHelper: null, powerHelperProblem: `${helperPath} probe did not answer as erg's node helper: ${JSON.stringify(helperLine.slice(0, 200))}` };
  }
  if (a.version !== 1) return { slurmVersion, ...limits, powerHelper: null, powerHelperProblem: `${helperPath} speaks version ${a.version} of the helper protocol; this erg speaks version 1` };
  const knobs = POWER_KNOBS.filter((k) => (a.knobs as unknown[]).includes(k));
  return { slurmVersion, ...limits, powerHelper: { version: 1, knobs }, powerHelperProblem: null };
}
