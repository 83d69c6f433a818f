import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compareTreeEntries, parseTree, serializeTree, type TreeEntry } from '../../src/foundations/storage/git/git-objects.js';
import { changedTreeEntries, changedTreeSpans, TreeBytes } from '../../src/foundations/storage/git/tree-bytes.js';

/** A deterministic random source, so a failing case can be run again. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const oid = (text: string) => createHash('sha1').update(text).digest('hex');

/** The entries whose oid or mode differ between two entry lists, as `name mode oid` on each side: what must agree. */
function differences(before: readonly TreeEntry[], after: readonly TreeEntry[]): string[] {
  const key = (e: TreeEntry) => `${e.mode} ${e.oid}`;
  const old = new Map(before.map((e) => [e.name, key(e)]));
  const now = new Map(after.map((e) => [e.name, key(e)]));
  const out: string[] = [];
  for (const name of new Set([...old.keys(), ...now.keys()]))
    if (old.get(name) !== now.get(name)) out.push(`${name}: ${old.get(name)} → ${now.get(name)}`);
  return out.sort();
}

function tree(entries: TreeEntry[]): Buffer {
  return serializeTree([...entries].sort(compareTreeEntries));
}

const bytes = (content: Buffer) => TreeBytes.of(content);

describe('changedTreeSpans', () => {
  it('finds every changed, added and removed entry of two trees, whatever changed where, as parsing both whole does', () => {
    const next = random(7);
    for (let round = 0; round < 300; round++) {
      const size = Math.floor(next() * 200);
      const entries: TreeEntry[] = [];
      for (let i = 0; i < size; i++) {
        const dir = next() < 0.1;
        entries.push({
          mode: dir ? '40000' : '100644',
          name: `${dir ? 'd' : 'f'}-${i}${next() < 0.2 ? ' spaced' : ''}.yaml`,
          oid: oid(`${round} ${i}`),
        });
      }
      const changed = entries.map((e) => ({ ...e }));
      const edits = Math.floor(next() * 4);
      for (let k = 0; k < edits && changed.length > 0; k++) {
        const at = Math.floor(next() * changed.length);
        const what = next();
        if (what < 0.4) changed[at] = { ...changed[at], oid: oid(`${round} edit ${k}`) };
        else if (what < 0.7) changed.splice(at, 1);
        else changed.push({ mode: '100644', name: `new-${round}-${k}.yaml`, oid: oid(`${round} new ${k}`) });
      }
      const [a, b] = [tree(entries), tree(changed)];
      const spans = changedTreeSpans(bytes(a), bytes(b));
      expect(differences(spans.before, spans.after), `round ${round}`).toEqual(differences(parseTree(a), parseTree(b)));
      // Spans parse no more than a few entries around the changes: the point of reading them.
      if (edits === 1 && size > 50) expect(spans.before.length + spans.after.length, `round ${round}`).toBeLessThan(8);
    }
  });

  it('reads nothing of two equal trees, and the whole of a tree against an empty one', () => {
    const entries = [0, 1, 2].map((i) => ({ mode: '100644', name: `f${i}.yaml`, oid: oid(String(i)) }));
    expect(changedTreeSpans(bytes(tree(entries)), bytes(tree(entries)))).toEqual({ before: [], after: [] });
    expect(changedTreeSpans(TreeBytes.EMPTY, bytes(tree(entries))).after).toHaveLength(3);
    expect(changedTreeSpans(bytes(tree(entries)), TreeBytes.EMPTY).before).toHaveLength(3);
  });
});

describe('changedTreeEntries', () => {
  const show = (change: { name: string; before?: TreeEntry; after?: TreeEntry }) =>
    `${change.name}: ${change.before ? `${change.before.mode} ${change.before.oid}` : undefined} → ${change.after ? `${change.after.mode} ${change.after.oid}` : undefined}`;

  it('names exactly the entries a diff of both trees parsed whole names, with each side, whatever changed', () => {
    const next = random(31);
    for (let round = 0; round < 300; round++) {
      const size = Math.floor(next() * (round % 10 === 0 ? 3000 : 200));
      const entries: TreeEntry[] = [];
      for (let i = 0; i < size; i++) {
        const dir = next() < 0.1;
        entries.push({ mode: dir ? '40000' : '100644', name: `n-${i}${next() < 0.2 ? ' spaced' : ''}.yaml`, oid: oid(`${round} ${i}`) });
      }
      const changed = entries.map((e) => ({ ...e }));
      const edits = Math.floor(next() * 5);
      for (let k = 0; k < edits && changed.length > 0; k++) {
        const at = Math.floor(next() * changed.length);
        const what = next();
        if (what < 0.3) changed[at] = { ...changed[at], oid: oid(`${round} edit ${k}`) };
        else if (what < 0.4) changed[at] = { ...changed[at], mode: changed[at].mode === '100644' ? '100755' : '100644' };
        // A file that becomes a directory of the same name (or back): another mode, another place in tree order.
        else if (what < 0.5)
          changed[at] = { ...changed[at], mode: changed[at].mode === '40000' ? '100644' : '40000', oid: oid(`${round} kind ${k}`) };
        else if (what < 0.75) changed.splice(at, 1);
        else changed.push({ mode: '100644', name: `new-${round}-${k}.yaml`, oid: oid(`${round} new ${k}`) });
      }
      const [a, b] = [tree(entries), tree(changed)];
      const [byteA, byteB] = [bytes(a), bytes(b)];
      const found = changedTreeEntries(byteA, byteB);
      // Asked again about the same two trees (remembered when big), the same answer.
      expect(changedTreeEntries(byteA, byteB), `round ${round}`).toEqual(found);
      expect(found.map(show).sort(), `round ${round}`).toEqual(fullDiff(parseTree(a), parseTree(b)).map(show).sort());
      if (edits === 1 && size > 50) expect(found.length, `round ${round}`).toBeLessThanOrEqual(2);
    }
  });

  it('finds one changed file of a 10,001-entry directory at its start, middle and end', () => {
    const entries = Array.from({ length: 10_001 }, (_, i) => ({
      mode: '100644',
      name: `flag-${String(i).padStart(5, '0')}.yaml`,
      oid: oid(String(i)),
    }));
    const before = bytes(tree(entries));
    for (const at of [0, 5_000, 10_000]) {
      const after = bytes(tree(entries.map((e, i) => (i === at ? { ...e, oid: oid(`changed ${i}`) } : e))));
      expect(changedTreeEntries(before, after)).toEqual([
        { name: entries[at].name, before: entries[at], after: { ...entries[at], oid: oid(`changed ${at}`) } },
      ]);
    }
    expect(changedTreeEntries(before, before)).toEqual([]);
  });
});

/** Both lists parsed whole, compared by name: each entry whose mode or oid differs, with what it was and is. */
function fullDiff(
  before: readonly TreeEntry[],
  after: readonly TreeEntry[],
): Array<{ name: string; before?: TreeEntry; after?: TreeEntry }> {
  const old = new Map(before.map((e) => [e.name, e]));
  const now = new Map(after.map((e) => [e.name, e]));
  const out: Array<{ name: string; before?: TreeEntry; after?: TreeEntry }> = [];
  for (const name of new Set([...old.keys(), ...now.keys()])) {
    const [l, r] = [old.get(name), now.get(name)];
    if (l?.mode === r?.mode && l?.oid === r?.oid) continue;
    out.push({ name, ...(l ? { before: l } : {}), ...(r ? { after: r } : {}) });
  }
  return out;
}
