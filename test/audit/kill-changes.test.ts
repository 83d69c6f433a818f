import { describe, expect, it } from 'vitest';
import { killChanges, readKills } from '../../src/features/audit/diff-entries.js';
import { killsYaml } from './fixtures.js';

const path = 'projects/shop/environments/prod/kills.yaml';
const kills = (spec: Record<string, { by: string; reason?: string }>) => readKills(path, killsYaml(spec))!;

describe('comparing two versions of kills.yaml', () => {
  it('names each flag killed, cleared or whose kill was edited, in key order', () => {
    const before = kills({ a: { by: 'erin' }, b: { by: 'erin' }, c: { by: 'erin' } });
    const after = kills({ a: { by: 'erin', reason: 'still broken' }, c: { by: 'erin' }, d: { by: 'sam', reason: 'errors' } });
    expect(killChanges(before, after)).toEqual([
      { flagKey: 'a', action: 'change', reason: 'still broken' },
      { flagKey: 'b', action: 'clear_kill' },
      { flagKey: 'd', action: 'kill', reason: 'errors' },
    ]);
  });

  it('finds nothing when only the formatting changed', () => {
    const text = killsYaml({ a: { by: 'erin', reason: 'x' } });
    expect(killChanges(readKills(path, text)!, readKills(path, `# kills of prod\n${text}`)!)).toEqual([]);
  });

  it('reads an empty file and `kills:` as no kills, and an invalid file as unreadable', () => {
    expect(readKills(path, '')).toEqual({});
    expect(readKills(path, 'kills:\n')).toEqual({});
    expect(readKills(path, 'kills: [a, b]\n')).toBeNull();
    expect(readKills(path, 'kills: {a: {killedBy: x}}\n')).toBeNull();
  });
});
