import { Readable } from 'node:stream';

/** Array items serialised per slice of a streamed answer: 2,000 runs are ~0.25 MB of JSON, 1-2 ms of the event loop. */
export const JSON_SLICE_ITEMS = 2_000;

/** One array of a streamed object: its key, its items, what each item is sent as, and how many go in a slice (streamedArray makes one). */
export interface StreamedArray {
  key: string;
  items: readonly unknown[];
  view: (item: never) => unknown;
  sliceItems: number;
}

/** `sliceItems`: fewer for large items, so that a slice stays a few hundred KB. */
export function streamedArray<T>(key: string, items: readonly T[], view: (item: T) => unknown, sliceItems = JSON_SLICE_ITEMS): StreamedArray {
  return { key, items, view, sliceItems };
}

/**
 * `{ ...head, [key]: items.map(view), … }` as JSON text, the same text JSON.stringify would give,
 * streamed: each array is mapped and serialised a slice of items at a time with the event
 * loop free in between, so a large answer (a 100,000-run campaign's is 12 MB) never holds the loop
 * for more than one slice and never exists whole in memory. `head` holds the small fields; the
 * arrays follow them in the order given.
 */
export function jsonObjectStream(head: Record<string, unknown>, arrays: readonly StreamedArray[]): Readable {
  return Readable.from(jsonObjectPieces(head, arrays), { objectMode: false });
}

async function* jsonObjectPieces(head: Record<string, unknown>, arrays: readonly StreamedArray[]): AsyncGenerator<string> {
  const opening = JSON.stringify(head);
  let separator = opening === '{}' ? '' : ',';
  let text = opening.slice(0, -1);
  for (const { key, items, view, sliceItems } of arrays) {
    text += `${separator}${JSON.stringify(key)}:[`;
    separator = ',';
    for (let from = 0; from < items.length; from += sliceItems) {
      const slice = JSON.stringify(items.slice(from, from + sliceItems).map((item) => view(item as never)));
      text += (from > 0 ? ',' : '') + slice.slice(1, -1);
      yield text;
      text = '';
      await new Promise((resolve) => setImmediate(resolve));
    }
    text += ']';
  }
  yield `${text}}`;
}
