import { JSON_SLICE_ITEMS, jsonObjectStream, streamedArray } from '../src/json-stream';

async function text(stream: NodeJS.ReadableStream): Promise<{ text: string; pieces: number }> {
  let out = '';
  let pieces = 0;
  for await (const chunk of stream) {
    out += chunk.toString();
    pieces += 1;
  }
  return { text: out, pieces };
}

describe('jsonObjectStream', () => {
  const runs = Array.from({ length: 2 * JSON_SLICE_ITEMS + 7 }, (_, i) => ({ id: `r${i}`, key: `a="${i}"\\`, repetition: i % 3, extra: 'not sent' }));

  test('writes the text JSON.stringify would write for the whole object, a slice of each array at a time', async () => {
    const head = { id: 'c1', runCounts: { pending: runs.length }, cancelRequestedAt: null, skipped: undefined };
    const view = ({ id, key, repetition }: (typeof runs)[number]) => ({ id, key, repetition });
    const { text: out, pieces } = await text(jsonObjectStream(head, [streamedArray('configurations', [], view), streamedArray('runs', runs, view), streamedArray('few', runs.slice(0, 5), view, 2)]));
    expect(out).toBe(JSON.stringify({ ...head, configurations: [], runs: runs.map(view), few: runs.slice(0, 5).map(view) }));
    // 3 slices of runs, 3 of `few` (2 + 2 + 1), and the closing brace.
    expect(pieces).toBe(7);
  });

  test('an empty head', async () => {
    expect((await text(jsonObjectStream({}, [streamedArray('xs', [1, 2, 3], (x) => x * 2, 2)]))).text).toBe('{"xs":[2,4,6]}');
    expect((await text(jsonObjectStream({}, []))).text).toBe('{}');
  });

  test('lets other work run between slices', async () => {
    const order: string[] = [];
    const stream = jsonObjectStream({}, [streamedArray('runs', runs, (r) => {
      if (r.id === 'r0' || r.id === `r${JSON_SLICE_ITEMS}`) order.push(`slice at ${r.id}`);
      return r.id;
    })]);
    setImmediate(() => order.push('other work'));
    await text(stream);
    expect(order).toEqual(['slice at r0', 'other work', `slice at r${JSON_SLICE_ITEMS}`]);
  });
});
