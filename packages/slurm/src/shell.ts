import { UnquotableValueError } from './errors';

/**
 * POSIX single-quote quoting: the result is one shell word that evaluates to `s` exactly.
 * Inside single quotes no character is special, so the only thing to handle is the quote itself,
 * which closes the quoted span, emits an escaped quote and reopens it (`'` → `'\''`).
 * Every remote command and every exported value erg builds goes through this function; it always
 * quotes (even "safe" strings) so readers never have to decide whether a word needed it.
 * Assumes the remote login shell is POSIX-like (sh, bash, zsh, ksh), as on every Slurm login node
 * erg targets; csh/tcsh treat `!` and newlines in quotes differently.
 */
export function shellQuote(s: string): string {
  // A NUL cannot be passed in an argv string: the argument would silently end there.
  if (s.includes('\0')) throw new UnquotableValueError();
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
