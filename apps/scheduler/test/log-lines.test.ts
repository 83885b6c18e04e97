import { forEachLine, forEachLineFromEnd } from '../src/log-lines';

const forward = (text: string) => {
  const out: string[] = [];
  forEachLine(text, (start, end) => void out.push(text.slice(start, end)));
  return out;
};
const backward = (text: string) => {
  const out: string[] = [];
  forEachLineFromEnd(text, (start, end) => void out.push(text.slice(start, end)));
  return out;
};

describe('the lines a user regex is matched against', () => {
  test('end at LF, without it and without a CR before it; the last needs no LF, and no empty line follows a final LF', () => {
    expect(forward('a\r\nb\n\nc\rd\n')).toEqual(['a', 'b', '', 'c\rd']);
    expect(forward('a\nb')).toEqual(['a', 'b']);
    expect(forward('\n')).toEqual(['']);
    expect(forward('')).toEqual([]);
    expect(forward('x\r')).toEqual(['x']);
  });

  test('from the end are the same lines in reverse, and stop when told', () => {
    for (const text of ['a\r\nb\n\nc\rd\n', 'a\nb', '\n', '', 'a\n\n', '\n\na', 'x\r']) {
      expect(backward(text)).toEqual(forward(text).reverse());
    }
    const seen: string[] = [];
    const text = 'a\nb\nc\n';
    forEachLineFromEnd(text, (start, end) => {
      seen.push(text.slice(start, end));
      return seen.length === 2;
    });
    expect(seen).toEqual(['c', 'b']);
  });
});
