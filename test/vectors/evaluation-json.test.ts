import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { vectors } from '../../scripts/vectors/evaluation.mjs';

const REGENERATE = 'node scripts/vectors/evaluation.mjs';

/**
 * The vectors are written by hand in scripts/vectors/*.mjs and generated into evaluation.json, which every
 * implementation runs. An edit to one without the other would leave the implementations checked against
 * cases nobody wrote, or the generator's cases checked by nobody.
 */
describe('test/vectors/evaluation.json', () => {
  const text = readFileSync(new URL('./evaluation.json', import.meta.url), 'utf8');
  const generated = `${JSON.stringify(vectors, null, 2)}\n`;

  it('holds the cases its generator makes now, case by case', () => {
    const inFile = new Map((JSON.parse(text).cases as Array<{ name: string }>).map((c) => [c.name, JSON.stringify(c)]));
    const fromGenerator = new Map(vectors.cases.map((c) => [c.name, JSON.stringify(c)]));
    const differ = [...new Set([...inFile.keys(), ...fromGenerator.keys()])].filter((name) => inFile.get(name) !== fromGenerator.get(name));
    expect(differ, `these cases differ from the generator's; run ${REGENERATE}`).toEqual([]);
  });

  it('is byte for byte what the generator writes (order and formatting too)', () => {
    expect(text === generated, `the file is not what the generator writes; run ${REGENERATE}`).toBe(true);
  });
});
