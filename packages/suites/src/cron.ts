import { CronExpressionParser } from 'cron-parser';

/** An IANA zone name Node's ICU knows (the same list BullMQ's cron parser resolves). */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * Five or six cron fields, or a macro such as @daily. cron-parser alone reads four fields as
 * something nobody meant, so the field count is checked first.
 */
export function cronIssue(cron: string, timezone: string): string | null {
  const fields = cron.trim().split(/\s+/);
  if (!cron.trim().startsWith('@') && fields.length !== 5 && fields.length !== 6) {
    return `expected 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first, got ${fields.length}; e.g. "0 2 * * *" is 02:00 every day`;
  }
  try {
    CronExpressionParser.parse(cron, { tz: timezone }).next();
    return null;
  } catch (err) {
    return `not a cron expression: ${(err as Error).message}`;
  }
}

/** The next time a cron expression fires after `from`, read in its time zone; null if never. */
export function nextRunAt(cron: string, timezone: string, from: Date = new Date()): Date | null {
  try {
    return CronExpressionParser.parse(cron, { tz: timezone, currentDate: from }).next().toDate();
  } catch {
    return null;
  }
}
