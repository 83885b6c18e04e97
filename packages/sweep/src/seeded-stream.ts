/**
 * The random numbers behind a randomized run order (run-order.ts): one stream per (seed, block).
 *
 * Generator: xoshiro128** (Blackman & Vigna, "Scrambled linear pseudorandom number generators",
 * 2018): 128 bits of state in four 32-bit words, 32-bit outputs, period 2^128 − 1. Its state is
 * filled by SplitMix32 — a Weyl sequence (step 0x9E3779B9) through MurmurHash3's 32-bit finalizer
 * fmix32 — started at fmix32(fmix32(seed) XOR block). fmix32 is a bijection of 32-bit words, so for
 * one block two seeds never share a start, nor two blocks for one seed.
 *
 * Only 32-bit integer arithmetic (Math.imul, shifts, >>> 0): the same numbers on every machine and
 * JavaScript engine, which a stored seed's promise ("the same seed gives the same order") needs.
 * Not for secrets. Integers below n are drawn without bias (rejection of the last partial range).
 */

const TWO_32 = 2 ** 32;
const WEYL = 0x9e3779b9;

/** MurmurHash3's finalizer: a bijection of 32-bit words that mixes every input bit into every output bit. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const rotl = (x: number, k: number): number => (x << k) | (x >>> (32 - k));

export class SeededStream {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** A stream of its own for each (seed, block); both non-negative integers below 2^32. */
  static of(seed: number, block: number): SeededStream {
    if (!isWord(seed) || !isWord(block)) throw new RangeError(`a stream needs a seed and a block in 0…2^32 − 1, got ${seed} and ${block}`);
    let weyl = fmix32((fmix32(seed) ^ block) >>> 0);
    const next = () => {
      weyl = (weyl + WEYL) >>> 0;
      return fmix32(weyl);
    };
    return new SeededStream([next(), next(), next(), next()]);
  }

  /** A stream from its raw state (four 32-bit words, not all zero): for checking against the reference generator. */
  constructor(state: readonly [number, number, number, number]) {
    if (!state.every(isWord) || state.every((w) => w === 0)) throw new RangeError('xoshiro128** needs four 32-bit words, not all zero');
    [this.s0, this.s1, this.s2, this.s3] = state;
  }

  /** The next 32-bit word (0 … 2^32 − 1). */
  nextWord(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** An integer in 0 … n − 1, each equally likely (n from 1 to 2^32). */
  below(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > TWO_32) throw new RangeError(`below(n) needs an integer n in 1…2^32, got ${n}`);
    // The words at or above `limit` would make the low residues likelier: draw again (p < 1/2).
    const limit = TWO_32 - (TWO_32 % n);
    for (;;) {
      const x = this.nextWord();
      if (x < limit) return x % n;
    }
  }
}

function isWord(x: number): boolean {
  return Number.isInteger(x) && x >= 0 && x < TWO_32;
}
