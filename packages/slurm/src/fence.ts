/**
 * The submission fence on the cluster: what makes a remote sbatch loop of a scheduler that died
 * (or lost its lease) harmless, instead of relying on it dying with its SSH channel.
 *
 * Three files beside each other on storage every login node shares (the cluster's work dir):
 *   <path>        the newest epoch, a decimal number, replaced atomically (rename);
 *   <path>.lock   flock'ed SHARED by a submit loop around each "check the epoch, run sbatch"
 *                 (sbatch inherits the lock, so it stays held until sbatch ends even if the loop's
 *                 shell is killed), and EXCLUSIVELY by a raise to wait those out;
 *   <path>.wlock  serialises raises, so the epoch never goes down.
 *
 * Raising to epoch E: write E, then take `.lock` exclusively and let go. After that every sbatch
 * of an older loop has either finished (and its job is visible to squeue) or will never run: a
 * loop re-reads the epoch under the shared lock before each sbatch and stops when it is not its
 * own. No writer starvation: once E is written, older loops take the shared lock only to stop.
 *
 * Needs `flock` (util-linux) on the login node; a raise fails with a message saying so.
 */
import { InvalidCommandInputError } from './errors';
import { shellQuote } from './shell';

/** The cluster's fence file and the epoch of the lease using it. */
export interface Fence {
  /** Absolute path of the fence file on the cluster. */
  path: string;
  epoch: bigint;
}

/** Exit status of a raise that waited `waitS` seconds for an older sbatch and gave up. */
export const FENCE_BUSY_EXIT = 95;
/** Exit status when the fence files cannot be made or locked (no flock, no permission). */
export const FENCE_BROKEN_EXIT = 96;

function checkFence(fence: Fence): void {
  if (!fence.path.startsWith('/') || /[\t\n\r\0]/.test(fence.path)) {
    throw new InvalidCommandInputError('fence.path', `is ${JSON.stringify(fence.path)}: need an absolute path without tabs or newlines`);
  }
  if (fence.epoch < 1n) throw new InvalidCommandInputError('fence.epoch', `is ${fence.epoch}: epochs start at 1`);
}

/**
 * The shell lines (POSIX sh, one line) that open the fence's lock file as fd 9 after checking
 * flock exists; shared by the raise and the submit loop.
 */
function openLock(fence: Fence): string {
  return (
    `f=${shellQuote(fence.path)}; ` +
    `command -v flock >/dev/null 2>&1 || { echo "flock (util-linux) is not installed on the login node; erg needs it to fence sbatch loops" >&2; exit ${FENCE_BROKEN_EXIT}; }; ` +
    `mkdir -p "$(dirname "$f")" && exec 9>>"$f.lock" || { echo "cannot create the fence files next to $f" >&2; exit ${FENCE_BROKEN_EXIT}; }; `
  );
}

/**
 * Raises the fence to `fence.epoch`, waiting up to `waitS` seconds for sbatch calls of older
 * epochs still in flight. Prints `raised <epoch>`, or `stale <newer epoch>` (and changes nothing)
 * when a newer lease already raised it. Exits FENCE_BUSY_EXIT when the wait ran out.
 */
export function raiseFenceCommand(fence: Fence, waitS: number): string {
  checkFence(fence);
  const wait = Math.max(1, Math.floor(waitS));
  const e = fence.epoch.toString();
  const script =
    openLock(fence) +
    `exec 8>>"$f.wlock" || exit ${FENCE_BROKEN_EXIT}; ` +
    `flock -w ${wait} 8 || { echo "another scheduler is raising the fence" >&2; exit ${FENCE_BUSY_EXIT}; }; ` +
    `cur=$(cat "$f" 2>/dev/null); case "$cur" in ''|*[!0-9]*) cur=0;; esac; ` +
    `if [ "$cur" -gt ${e} ]; then echo "stale $cur"; exit 0; fi; ` +
    `t="$f.tmp.$$"; printf '%s\\n' ${e} >"$t" && mv -f "$t" "$f" || { echo "cannot write the fence file $f" >&2; exit ${FENCE_BROKEN_EXIT}; }; ` +
    `flock -x -w ${wait} 9 || { echo "an sbatch of an earlier scheduler was still running after ${wait} s" >&2; exit ${FENCE_BUSY_EXIT}; }; ` +
    `echo "raised ${e}"`;
  return `sh -c ${shellQuote(script)}`;
}

/** What a raise found: raised to our epoch, or a newer lease's epoch already there. */
export type FenceRaise = { raised: true } | { raised: false; current: bigint };

export function parseRaiseFence(stdout: string): FenceRaise | null {
  const m = /^(raised|stale) (\d+)\s*$/m.exec(stdout);
  if (!m) return null;
  return m[1] === 'raised' ? { raised: true } : { raised: false, current: BigInt(m[2]!) };
}

/**
 * The part of the submit loop that runs before each sbatch: take the shared lock, stop when the
 * epoch is not ours (printing `<path>\tfenced\t<epoch found>`). `$p` is the script path. The
 * lock is released after the result line is printed.
 */
export function fenceCheck(fence: Fence): { open: string; before: string; after: string } {
  checkFence(fence);
  const e = fence.epoch.toString();
  return {
    open: openLock(fence),
    before:
      `flock -s 9 || exit ${FENCE_BROKEN_EXIT}; ` +
      // read, a builtin: no process per sbatch for the check itself.
      `cur=; read -r cur 2>/dev/null <"$f"; ` +
      `if [ "$cur" != ${shellQuote(e)} ]; then printf '%s\\tfenced\\t%s\\n' "$p" "$cur"; flock -u 9; break; fi; `,
    after: 'flock -u 9; ',
  };
}
