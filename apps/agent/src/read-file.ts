import fs from 'node:fs';

/** A small file's whole text, or null where it cannot be read (missing, no permission): for probing at start-up, not for sampling. */
export function readTextFile(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Reads small sysfs/procfs files into one reused buffer and parses numbers straight from its
 * bytes, so a sampling tick allocates (almost) nothing. Each file is opened once and re-read
 * with pread at offset 0, which makes sysfs and procfs produce a fresh value (one syscall per
 * read instead of open + read + close). A file replaced by rename is therefore not seen anew:
 * tests rewrite fixture files in place. A failed read closes the file, so the next read reopens it.
 */
export class FileReader {
  readonly buf: Buffer;
  private readonly fds = new Map<string, number>();
  /** Bytes of the last read. */
  length = 0;
  /** Index just past the last number parsed by `numberAt`. */
  next = 0;

  constructor(size = 4096) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** Reads up to the buffer's size from the start of `path`; returns the byte count. Throws on I/O errors. */
  read(path: string): number {
    let fd = this.fds.get(path);
    if (fd === undefined) {
      fd = fs.openSync(path, 'r');
      this.fds.set(path, fd);
    }
    try {
      let total = 0;
      for (;;) {
        const n = fs.readSync(fd, this.buf, total, this.buf.length - total, total);
        if (n <= 0) break;
        total += n;
        if (total === this.buf.length) break;
      }
      this.length = total;
      return total;
    } catch (err) {
      this.fds.delete(path);
      fs.closeSync(fd);
      throw err;
    }
  }

  /** Reads `path` once, without keeping it open (for files read only at detection). */
  readOnce(path: string): number {
    try {
      return this.read(path);
    } finally {
      this.forget(path);
    }
  }

  forget(path: string): void {
    const fd = this.fds.get(path);
    if (fd === undefined) return;
    this.fds.delete(path);
    fs.closeSync(fd);
  }

  /** Closes every file held open. */
  close(): void {
    for (const fd of this.fds.values()) fs.closeSync(fd);
    this.fds.clear();
  }

  /** Reads `path` (kept open) and parses the first number in it (NaN when there is none). */
  readNumber(path: string): number {
    this.read(path);
    return this.numberAt(0);
  }

  /** Like readNumber, for a file read only at detection (not kept open). */
  readNumberOnce(path: string): number {
    this.readOnce(path);
    return this.numberAt(0);
  }

  /** Reads `path` as trimmed text (for labels and names, read once at detection). */
  readText(path: string): string {
    const n = this.readOnce(path);
    return this.buf.toString('utf8', 0, n).trim();
  }

  /**
   * Parses the first decimal number at or after `from` in the last read (skipping anything
   * that is not a digit, '-' or '.'); sets `next` past it. NaN when none is found.
   */
  numberAt(from: number): number {
    const buf = this.buf;
    const end = this.length;
    let i = from;
    while (i < end) {
      const c = buf[i] as number;
      if ((c >= 48 && c <= 57) || c === 45 || c === 46) break;
      i += 1;
    }
    let negative = false;
    if (i < end && buf[i] === 45) {
      negative = true;
      i += 1;
    }
    let value = 0;
    let digits = 0;
    while (i < end) {
      const c = buf[i] as number;
      if (c < 48 || c > 57) break;
      value = value * 10 + (c - 48);
      digits += 1;
      i += 1;
    }
    if (i < end && buf[i] === 46) {
      i += 1;
      let scale = 0.1;
      while (i < end) {
        const c = buf[i] as number;
        if (c < 48 || c > 57) break;
        value += (c - 48) * scale;
        scale /= 10;
        digits += 1;
        i += 1;
      }
    }
    this.next = i;
    if (digits === 0) return Number.NaN;
    return negative ? -value : value;
  }

  /** Index of `needle` in the last read, or -1. */
  indexOf(needle: Buffer): number {
    const at = this.buf.indexOf(needle);
    return at >= 0 && at + needle.length <= this.length ? at : -1;
  }
}
