import { isSlurmTime, parseSlurmTime, SlurmTimeError } from '../src';
import { issueAt, issuesOf, minimal, specOf } from './helpers';

describe('parseSlurmTime', () => {
  it.each<[string, number]>([
    ['30', 30 * 60],
    ['0', 0],
    ['90', 90 * 60],
    ['5:30', 5 * 60 + 30],
    ['00:30:00', 30 * 60],
    ['01:00:00', 3600],
    ['48:00:00', 48 * 3600],
    ['100:59:59', 100 * 3600 + 59 * 60 + 59],
    ['2000', 2000 * 60],
    ['1-0', 86400],
    ['2-12', 2 * 86400 + 12 * 3600],
    ['1-2:30', 86400 + 2 * 3600 + 30 * 60],
    ['1-02:03:04', 86400 + 2 * 3600 + 3 * 60 + 4],
    ['0-0:0:1', 1],
  ])('%s → %i s', (text, seconds) => expect(parseSlurmTime(text)).toBe(seconds));

  it.each([
    '',
    ' 30',
    '30 ',
    '90min',
    '1h',
    'UNLIMITED',
    'INFINITE',
    'infinite',
    '-1',
    '1.5',
    '1:60',
    '1:00:60',
    '1:60:00',
    '1-24',
    '1-100',
    '0:60',
    '1-24:00:00',
    '1-1:60',
    '1:2:3:4',
    '1-',
    '-1:00',
    '1--1',
    ':30',
    '30:',
    '1-1-1',
    '1234567890',
    '０１',
    '1\n',
  ])('refuses %j', (text) => {
    expect(() => parseSlurmTime(text)).toThrow(SlurmTimeError);
    expect(isSlurmTime(text)).toBe(false);
  });

  it('says which formats it takes', () => {
    expect(() => parseSlurmTime('90min')).toThrow(
      '"90min" is not a Slurm time; use minutes, MM:SS, HH:MM:SS or D-HH:MM:SS, e.g. "00:30:00"',
    );
  });
});

describe('resources.time', () => {
  it('defaults to one hour', () => {
    expect(specOf({ ...minimal }).resources.time).toBe('01:00:00');
  });

  it('reports a non-Slurm time at resources.time', () => {
    const issue = issueAt(issuesOf({ ...minimal, resources: { time: '90min' } }), 'resources.time');
    expect(issue).toEqual({
      path: 'resources.time',
      code: 'invalid_slurm_time',
      message: '"90min" is not a Slurm time; use minutes, MM:SS, HH:MM:SS or D-HH:MM:SS, e.g. "00:30:00"',
    });
  });

  it('refuses zero, which Slurm reads as no limit', () => {
    expect(issueAt(issuesOf({ ...minimal, resources: { time: '0:00:00' } }), 'resources.time').message).toMatch(/no time limit/);
  });
});

