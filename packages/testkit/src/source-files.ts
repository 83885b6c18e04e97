import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Folders a source scan never enters: installed packages, build output, generated code, test output. */
export const NON_SOURCE_DIRS: ReadonlySet<string> = new Set(['node_modules', 'dist', 'generated', 'test-artifacts', '.turbo']);

export interface SourceScan {
  /** File names to list, e.g. /\.tsx?$/. */
  match: RegExp;
  /** Folders not to enter (by name, or by full path); default: NON_SOURCE_DIRS by name. */
  skipDir?: (name: string, full: string) => boolean;
}

/**
 * Every file under `dir` whose name matches, depth first — for the tests that scan the sources
 * for what must appear in one place only (database access, run-directory names, error codes).
 */
export function sourceFiles(dir: string, scan: SourceScan): string[] {
  const skip = scan.skipDir ?? ((name: string) => NON_SOURCE_DIRS.has(name));
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!skip(entry.name, full)) out.push(...sourceFiles(full, scan));
    } else if (entry.isFile() && scan.match.test(entry.name)) {
      out.push(full);
    }
  }
  return out;
}

/** The matching files of every `apps/<app>/src` and `packages/<package>/src` under `root`, but the named apps/packages. */
export function appAndPackageSources(root: string, scan: SourceScan & { except?: readonly string[] }): string[] {
  const out: string[] = [];
  for (const group of ['apps', 'packages']) {
    for (const name of readdirSync(path.join(root, group))) {
      const src = path.join(root, group, name, 'src');
      if (!scan.except?.includes(name) && existsSync(src)) out.push(...sourceFiles(src, scan));
    }
  }
  return out;
}
