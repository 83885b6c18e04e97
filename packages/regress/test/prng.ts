import { seededRandom } from '@erg/testkit';

/** mulberry32 (shared by every test through @erg/testkit). */
export const mulberry32 = seededRandom;

/** Standard normal draws by Box–Muller on a uniform source. */
export function normal(uniform: () => number): () => number {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    const u = 1 - uniform(); // (0, 1]: log(u) is finite
    const v = uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}
