import { InvalidCommandInputError, sacctCommand, scancelCommand, squeueCommand } from '../src';

describe('squeueCommand', () => {
  it('asks once for all of the user\'s jobs, in the parsable format parse.ts reads, times in UTC', () => {
    expect(squeueCommand()).toBe(
      "env TZ=UTC SLURM_TIME_FORMAT=standard SLURM_BITSTR_LEN=0 squeue --me --noheader --states=all --format='%A|%i|%F|%K|%T|%r|%V|%S|%e|%N|%j'",
    );
    expect(squeueCommand({ user: 'alice' })).toContain("--user='alice'");
  });

  it('refuses a user name that is not one', () => {
    expect(() => squeueCommand({ user: 'a;b' })).toThrow(InvalidCommandInputError);
  });
});

describe('sacctCommand', () => {
  it('selects allocations since a UTC time, every state, untruncated fields', () => {
    const since = new Date(Date.UTC(2026, 10, 30, 3, 4, 5, 678));
    expect(sacctCommand({ since })).toBe(
      "env TZ=UTC SLURM_TIME_FORMAT=standard SLURM_BITSTR_LEN=0 sacct -X -n -P --starttime='2026-11-30T03:04:05' --endtime=now " +
        '--state=BF,CA,CD,DL,F,NF,OOM,PD,PR,R,RQ,RS,RV,S,TO ' +
        "--format='JobIDRaw,JobID,State,ExitCode,Reason,Submit,Start,End,ElapsedRaw,NodeList,ConsumedEnergyRaw,JobName'",
    );
    expect(sacctCommand({ since, user: 'bob' })).toContain(" --user='bob' ");
  });

  it('refuses an invalid date', () => {
    expect(() => sacctCommand({ since: new Date(Number.NaN) })).toThrow(InvalidCommandInputError);
  });
});

describe('scancelCommand', () => {
  it('quotes job ids and refuses anything else', () => {
    expect(scancelCommand(['12', '13_4'])).toBe("scancel '12' '13_4'");
    expect(() => scancelCommand([])).toThrow(InvalidCommandInputError);
    expect(() => scancelCommand(['12; rm -rf ~'])).toThrow(InvalidCommandInputError);
    expect(() => scancelCommand(['-u root'])).toThrow(InvalidCommandInputError);
  });
});
