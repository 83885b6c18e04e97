import { scopeExcess, type TokenScope } from '../src/tokens';

const at = (iso: string) => new Date(iso);
const full: TokenScope = { expiresAt: null, projectIds: [], maxRole: null };
const bounds = (parent: TokenScope, child: TokenScope) => scopeExcess(parent, child).map((e) => e.bound);

describe('scopeExcess: where a token would be wider than its parent', () => {
  test('a full parent bounds nothing', () => {
    expect(bounds(full, full)).toEqual([]);
    expect(bounds(full, { expiresAt: at('2030-01-01'), projectIds: ['a'], maxRole: 'maintainer' })).toEqual([]);
  });

  test('expiry: a child of an expiring parent must expire, and no later', () => {
    const parent = { ...full, expiresAt: at('2030-01-01T00:00:00Z') };
    expect(bounds(parent, full)).toEqual(['expiresAt']);
    expect(bounds(parent, { ...full, expiresAt: at('2030-01-01T00:00:00.001Z') })).toEqual(['expiresAt']);
    expect(bounds(parent, { ...full, expiresAt: at('2030-01-01T00:00:00Z') })).toEqual([]);
  });

  test('projects: a child of a project-limited parent names a subset (empty means every project: wider)', () => {
    const parent = { ...full, projectIds: ['a', 'b'] };
    expect(bounds(parent, { ...full, projectIds: ['b'] })).toEqual([]);
    expect(scopeExcess(parent, { ...full, projectIds: ['b', 'c'] })).toEqual([{ bound: 'projects', projectIds: ['c'] }]);
    expect(bounds(parent, full)).toEqual(['projects']);
  });

  test('role: caps compare as caps; no cap under a capped parent is wider', () => {
    const parent = { ...full, maxRole: 'researcher' as const };
    expect(bounds(parent, { ...full, maxRole: 'viewer' })).toEqual([]);
    expect(bounds(parent, { ...full, maxRole: 'researcher' })).toEqual([]);
    expect(bounds(parent, { ...full, maxRole: 'maintainer' })).toEqual(['role']);
    expect(bounds(parent, full)).toEqual(['role']);
  });

  test('every bound exceeded is named', () => {
    const parent = { expiresAt: at('2030-01-01'), projectIds: ['a'], maxRole: 'viewer' as const };
    expect(bounds(parent, full)).toEqual(['expiresAt', 'projects', 'role']);
  });
});
