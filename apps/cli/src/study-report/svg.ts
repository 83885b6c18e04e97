// The small vector-graphics kit the study report draws with: escaping, linear scales with round
// ticks, and axes. Plain SVG text, written by erg itself (no plotting library): the report must be
// one self-contained file, and print to PDF as vectors.

/** Text for an SVG/HTML text node or a double-quoted attribute. */
export function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A number for SVG coordinates: two decimals are finer than any printer. */
export function px(x: number): string {
  return String(Math.round(x * 100) / 100);
}

export interface Scale {
  (value: number): number;
  domain: [number, number];
  ticks: number[];
}

/** Round tick values (1, 2, 2.5 or 5 × 10^k apart) covering [lo, hi], about `count` of them. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const ticks: number[] = [];
  // From integer multiples of the step, each rounded to 12 digits: 0.1 + 0.2 never shows as 0.30000000000000004.
  for (let k = Math.ceil(lo / step); k * step <= hi + step * 1e-9; k++) ticks.push(Number((k * step).toPrecision(12)));
  return ticks;
}

/**
 * A linear scale from the data range `values` (padded by 6 % each side, widened to round ticks) to
 * the pixel range [from, to]. A single value gets a range of ±10 % around it (±1 at 0). `zero`:
 * the range includes 0 (bars). `floor`: the range starts no lower (time, energy and bytes are never
 * negative, though a wide interval of a small mean reaches below 0). Values outside the range are
 * drawn at its edge: an interval's end beyond it stops at the axis.
 */
export function linearScale(values: readonly number[], from: number, to: number, options: { zero?: boolean; floor?: number } = {}): Scale {
  const floor = options.floor ?? Number.NEGATIVE_INFINITY;
  const kept = values.map((v) => Math.max(v, floor));
  let lo = Math.min(...kept, ...(options.zero ? [0] : []));
  let hi = Math.max(...kept, ...(options.zero ? [0] : []));
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) [lo, hi] = [0, 1];
  if (hi === lo) [lo, hi] = lo === 0 ? [-1, 1] : [lo - Math.abs(lo) * 0.1, hi + Math.abs(hi) * 0.1];
  const pad = (hi - lo) * 0.06;
  lo = options.zero && lo >= 0 ? lo : Math.max(lo - pad, floor);
  hi += pad;
  const ticks = niceTicks(lo, hi);
  const domain: [number, number] = [lo, hi];
  const scale = ((v: number) => from + ((Math.min(Math.max(v, lo), hi) - lo) / (hi - lo)) * (to - from)) as Scale;
  scale.domain = domain;
  scale.ticks = ticks.filter((t) => t >= lo && t <= hi);
  return scale;
}

export interface Frame {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** The opening tag of a figure's SVG: its own size, so that it scales to the page width and prints as vectors. */
export function svgOpen(frame: Pick<Frame, 'width' | 'height'>, label: string, testid: string): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${frame.width} ${frame.height}" width="100%" role="img" aria-label="${esc(label)}" ` +
    `data-figure-svg="${esc(testid)}" font-family="Helvetica, Arial, sans-serif" font-size="11">`
  );
}

/** Both axes with their ticks, grid lines and titles. */
export function axes(frame: Frame, x: Scale, y: Scale, titles: { x: string; y: string }, format: { x: (v: number) => string; y: (v: number) => string }): string {
  const { left, right, top, bottom } = frame;
  const parts: string[] = [`<g class="axes" stroke="#999" stroke-width="0.6">`];
  for (const t of x.ticks) parts.push(`<line x1="${px(x(t))}" x2="${px(x(t))}" y1="${top}" y2="${bottom}" stroke="#e4e4e4"/>`);
  for (const t of y.ticks) parts.push(`<line x1="${left}" x2="${right}" y1="${px(y(t))}" y2="${px(y(t))}" stroke="#e4e4e4"/>`);
  parts.push(`<rect x="${left}" y="${top}" width="${right - left}" height="${bottom - top}" fill="none"/>`, '</g>');
  for (const t of x.ticks) parts.push(`<text x="${px(x(t))}" y="${bottom + 14}" text-anchor="middle">${esc(format.x(t))}</text>`);
  for (const t of y.ticks) parts.push(`<text x="${left - 5}" y="${px(y(t) + 4)}" text-anchor="end">${esc(format.y(t))}</text>`);
  parts.push(`<text x="${px((left + right) / 2)}" y="${bottom + 32}" text-anchor="middle" font-weight="bold">${esc(titles.x)}</text>`);
  parts.push(`<text transform="translate(14 ${px((top + bottom) / 2)}) rotate(-90)" text-anchor="middle" font-weight="bold">${esc(titles.y)}</text>`);
  return parts.join('');
}

/**
 * A horizontal or vertical error bar from `a` to `b` (pixels) at `at`, with a cap at each end
 * that is the interval's own; an end the frame cut (`cut`) gets an arrowhead instead: the interval
 * goes on beyond the plot.
 */
export function whisker(direction: 'h' | 'v', at: number, a: number, b: number, color: string, cut: { a?: boolean; b?: boolean } = {}): string {
  const cap = 3;
  const end = (p: number, away: number, isCut: boolean | undefined) =>
    direction === 'h'
      ? isCut ? `M${px(p - away * 5)} ${px(at - cap)}L${px(p)} ${px(at)}L${px(p - away * 5)} ${px(at + cap)}` : `M${px(p)} ${px(at - cap)}V${px(at + cap)}`
      : isCut ? `M${px(at - cap)} ${px(p - away * 5)}L${px(at)} ${px(p)}L${px(at + cap)} ${px(p - away * 5)}` : `M${px(at - cap)} ${px(p)}H${px(at + cap)}`;
  const line = direction === 'h' ? `M${px(a)} ${px(at)}H${px(b)}` : `M${px(at)} ${px(a)}V${px(b)}`;
  return `<path d="${line}${end(a, Math.sign(a - b), cut.a)}${end(b, Math.sign(b - a), cut.b)}" stroke="${color}" stroke-width="1" fill="none"/>`;
}

/**
 * The values a plot's axis should cover: the means, and the interval ends as far as half the
 * means' spread beyond them (or half the largest mean, where all means are equal). With few
 * repetitions one interval can be ten times wider than the differences the plot is about; it is
 * cut at the frame (and drawn with an arrowhead there) rather than squashing every point together.
 */
export function plotRange(means: readonly number[], ends: readonly number[]): number[] {
  const lo = Math.min(...means), hi = Math.max(...means);
  const reach = 0.5 * (hi - lo || Math.abs(hi) || 1);
  return [...means, ...ends.map((e) => Math.min(Math.max(e, lo - reach), hi + reach))];
}

/** Colours that stay apart in print and for the common colour-vision deficiencies (Okabe–Ito), then greys. */
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000', '#777777', '#AAAAAA', '#444444', '#CCCCCC'];
