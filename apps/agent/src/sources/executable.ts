import fs from 'node:fs';
import path from 'node:path';

/** Whether `bin` names an executable (a path, or a name found on PATH) — checked before child_process is loaded at all. */
export function findExecutable(bin: string, envPath: string | undefined): boolean {
  const candidates = bin.includes('/') ? [bin] : (envPath ?? '').split(':').filter(Boolean).map((d) => path.join(d, bin));
  return candidates.some((c) => {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      return fs.statSync(c).isFile();
    } catch {
      return false;
    }
  });
}
