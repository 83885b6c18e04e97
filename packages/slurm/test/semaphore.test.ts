import { Semaphore } from '../src';

describe('Semaphore', () => {
  it('never lets more than capacity holders in, and serves waiters in order', async () => {
    const sem = new Semaphore(3);
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const release = await sem.acquire();
        order.push(i);
        inside++;
        most = Math.max(most, inside);
        await new Promise((r) => setTimeout(r, 2));
        inside--;
        release();
      }),
    );
    expect(most).toBe(3);
    expect(order).toEqual([...Array(20).keys()]);
    expect(sem.inUse).toBe(0);
  });

  it('ignores a second release of the same permit', async () => {
    const sem = new Semaphore(1);
    const release = await sem.acquire();
    release();
    release();
    expect(sem.inUse).toBe(0);
    await sem.acquire();
    expect(sem.inUse).toBe(1);
  });

  it('abort fails waiters and later acquisitions', async () => {
    const sem = new Semaphore(1);
    await sem.acquire();
    const waiting = sem.acquire();
    sem.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    await expect(sem.acquire()).rejects.toThrow('gone');
  });

  it('refuses a capacity below 1', () => {
    expect(() => new Semaphore(0)).toThrow(RangeError);
  });
});
