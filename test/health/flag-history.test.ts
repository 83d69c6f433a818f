import { describe, expect, it } from 'vitest';
import { effectiveKey, FlagHistory } from '../../src/features/health/flag-history.js';

const ON = { key: 'v:true', offKey: 'v:false' };
const HALF = { key: 'mixed', offKey: 'v:false' };

describe('what history says of a flag', () => {
  it('dates each environment from when it reached what it serves now, not from its last edit', () => {
    const h = new FlagHistory();
    h.flagAdded('shop/a', 1);
    h.configChanged('shop/a', 'prod', HALF, 1);
    h.configChanged('shop/a', 'prod', ON, 5);
    h.configChanged('shop/a', 'prod', { ...ON }, 9); // another edit serving the same
    expect(h.flags.get('shop/a')).toMatchObject({ createdAt: 1, since: { prod: 5 } });
  });

  it('counts a kill as serving valueOff, and its clearing as serving the config again', () => {
    const h = new FlagHistory();
    h.flagAdded('shop/a', 1);
    h.configChanged('shop/a', 'prod', ON, 1);
    h.killsChanged('shop', 'prod', new Set(['a']), 4);
    expect(effectiveKey(h.flags.get('shop/a')!, 'prod')).toBe('v:false');
    expect(h.flags.get('shop/a')!.since.prod).toBe(4);
    h.killsChanged('shop', 'prod', new Set(), 6);
    expect(effectiveKey(h.flags.get('shop/a')!, 'prod')).toBe('v:true');
    expect(h.flags.get('shop/a')!.since.prod).toBe(6);
  });

  it('leaves flags whose kill did not change alone when another flag is killed', () => {
    const h = new FlagHistory();
    for (const k of ['a', 'b']) {
      h.flagAdded(`shop/${k}`, 1);
      h.configChanged(`shop/${k}`, 'prod', ON, 1);
    }
    h.killsChanged('shop', 'prod', new Set(['a']), 3);
    h.killsChanged('shop', 'prod', new Set(['a', 'b']), 7);
    expect(h.flags.get('shop/a')!.since.prod).toBe(3);
    expect(h.flags.get('shop/b')!.since.prod).toBe(7);
  });

  it('forgets a deleted flag, so one made again under its key is new', () => {
    const h = new FlagHistory();
    h.flagAdded('shop/a', 1);
    h.flagDeleted('shop/a');
    h.flagAdded('shop/a', 8);
    expect(h.flags.get('shop/a')!.createdAt).toBe(8);
  });

  it('survives a round trip through JSON, and refuses what is not its own', () => {
    const h = new FlagHistory();
    h.flagAdded('shop/a', 1);
    h.configChanged('shop/a', 'dev', ON, 2);
    h.killsChanged('shop', 'dev', new Set(['a']), 3);
    const back = FlagHistory.fromJSON(JSON.parse(JSON.stringify(h)))!;
    expect(back.flags.get('shop/a')).toEqual(h.flags.get('shop/a'));
    expect(back.kills.get('shop/dev')).toEqual(['a']);
    expect(FlagHistory.fromJSON({ flags: [['x', { killed: 'no' }]], kills: [] })).toBeUndefined();
    expect(FlagHistory.fromJSON(null)).toBeUndefined();
  });
});
