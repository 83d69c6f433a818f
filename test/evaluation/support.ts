import { readFileSync } from 'node:fs';
import { type Condition, compileEnvironment, type EvaluationContext, type EvaluationResult, type SnapshotFlag } from '@flagops/core';
import murmurhash from 'murmurhash-js';

/** Reference MurmurHash3 of a string's UTF-8 bytes, from murmurhash-js (not the code under test). */
export function referenceMurmur(s: string, seed = 0): number {
  const bytes = new TextEncoder().encode(s);
  let byteString = '';
  for (const b of bytes) byteString += String.fromCharCode(b);
  return murmurhash.murmur3(byteString, seed);
}

/** The bucket, (murmur3("<flagKey>/<userId>") mod 10000) / 100, computed with the reference hash. */
export function referenceBucket(flagKey: string, userId: string): number {
  return (referenceMurmur(`${flagKey}/${userId}`) % 10000) / 100;
}

/** A flag that serves "blue" on and "grey" off, enabled at 0% with no rules, unless overridden. */
export function flag(overrides: Partial<SnapshotFlag> = {}): SnapshotFlag {
  return {
    enabled: true,
    rolloutPct: 0,
    valueOn: 'blue',
    valueOff: 'grey',
    rules: [],
    killed: false,
    archived: false,
    defaultValue: 'legacy',
    ...overrides,
  };
}

/** The first `user-<n>` whose reference bucket for `flagKey` satisfies `predicate`. */
export function findUser(flagKey: string, predicate: (bucket: number) => boolean): { userId: string; bucket: number } {
  for (let i = 0; ; i++) {
    const userId = `user-${i}`;
    const b = referenceBucket(flagKey, userId);
    if (predicate(b)) return { userId, bucket: b };
  }
}

export interface Vector {
  name: string;
  flagKey: string;
  flag: SnapshotFlag | null;
  context: EvaluationContext;
  killedKeys?: string[];
  expected: EvaluationResult;
}

export function loadVectors(): Vector[] {
  const file = new URL('../vectors/evaluation.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { cases: Vector[] }).cases;
}

/** A deterministic pseudo-random generator (LCG), so property-style tests are reproducible. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Evaluates one flag under the key "f". */
export function evaluateOne(f: SnapshotFlag, context: EvaluationContext, killedKeys?: ReadonlySet<string>): EvaluationResult {
  return compileEnvironment({ f }).evaluate('f', context, killedKeys);
}

/** Whether a rule made of this one condition applies to the context (it serves on; otherwise the flag serves off). */
export function holds(condition: Condition | Record<string, unknown>, context: EvaluationContext): boolean {
  const f = flag({ rules: [{ id: 'r', conditions: [condition as Condition], serve: 'on' }] });
  return evaluateOne(f, context).reason === 'rule_match';
}
