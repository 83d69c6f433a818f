import { describe, expect, it } from 'vitest';
import { UpstreamRotation } from '../../src/apps/replica/upstream-rotation.js';

describe('which upstream a replica follows next', () => {
  const noJitter = { retryMinMs: 250, retryMaxMs: 5_000, random: () => 1 };

  it('goes round the list, trying each untried one at once and waiting only after a whole round failed', () => {
    const rotation = new UpstreamRotation(['http://a', 'http://b', 'http://c'], noJitter);
    expect(rotation.current).toBe('http://a');
    expect([rotation.failed(), rotation.failed(), rotation.failed(), rotation.failed()]).toEqual([
      { origin: 'http://b', delayMs: 0 },
      { origin: 'http://c', delayMs: 0 },
      { origin: 'http://a', delayMs: 250 },
      { origin: 'http://b', delayMs: 0 },
    ]);
  });

  it('doubles the wait each failed round up to 5 s, and starts over once one answers', () => {
    const rotation = new UpstreamRotation(['http://a', 'http://b'], noJitter);
    const waits = Array.from({ length: 14 }, () => rotation.failed().delayMs).filter((ms) => ms > 0);
    expect(waits).toEqual([250, 500, 1_000, 2_000, 4_000, 5_000, 5_000]);
    rotation.succeeded();
    expect(rotation.failed().delayMs).toBe(0);
  });

  it('with one upstream, waits before every retry, as a replica of one control plane always did', () => {
    const rotation = new UpstreamRotation(['http://a'], noJitter);
    expect([rotation.failed(), rotation.failed()]).toEqual([
      { origin: 'http://a', delayMs: 250 },
      { origin: 'http://a', delayMs: 500 },
    ]);
  });
});
