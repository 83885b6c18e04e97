import { expandHostlist, MAX_HOSTLIST_NAMES } from '../src';

describe('expandHostlist', () => {
  test.each([
    ['vm', ['vm']],
    ['gh[001-003,007],login1', ['gh001', 'gh002', 'gh003', 'gh007', 'login1']],
    ['rack[1-2]-node[01-02]', ['rack1-node01', 'rack1-node02', 'rack2-node01', 'rack2-node02']],
    ['n[9-11]', ['n9', 'n10', 'n11']],
    ['', []],
  ])('%s', (expression, names) => {
    expect(expandHostlist(expression)).toEqual(names);
  });

  test.each(['gh[1-', 'gh[a-b]', 'gh[3-1]', 'gh]1['])('refuses the malformed %s', (expression) => {
    expect(expandHostlist(expression)).toBeNull();
  });

  test('refuses an expression naming more than MAX_HOSTLIST_NAMES nodes instead of expanding it', () => {
    expect(expandHostlist(`n[0-${MAX_HOSTLIST_NAMES}]`)).toBeNull();
    expect(expandHostlist('a[0-999]b[0-999]')).toBeNull();
  });
});
