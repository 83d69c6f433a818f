/**
 * An environment compiled from the one before (CompiledEnvironment.withFlags and withChanges, what the
 * evaluation server does on every change) evaluates exactly as one compiled from scratch, for any change of
 * any environment: entries changed, added, removed and kept, prerequisites between them (cycles included,
 * which a mix of two environments makes), segments, kills. The environment it was made from keeps evaluating
 * as before, and unchanged flags without prerequisites keep their compiled flag.
 */
import { deepStrictEqual, strictEqual } from 'node:assert/strict';
import { type CompiledEnvironment, compileEnvironment, type EvaluationContext, type SnapshotFlag, setOwn } from '@flagops/core';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { context, environmentSnapshot } from './arbitraries.js';
import { runs } from './fuzz-settings.js';

const contexts = fc.array(context, { minLength: 1, maxLength: 4 });
/** What happens to each flag of the first environment: kept (the same object), replaced by an entry of the second, or removed. */
const fate = fc.constantFrom('keep', 'keep', 'replace', 'remove');

function evaluations(env: CompiledEnvironment, keys: readonly string[], ctxs: EvaluationContext[], killed: ReadonlySet<string>) {
  return keys.flatMap((key) => ctxs.map((ctx) => env.evaluate(key, ctx, killed)));
}

describe('an environment compiled from the one before', () => {
  it('evaluates every flag as one compiled from scratch, and leaves the one before as it was', () => {
    fc.assert(
      fc.property(
        environmentSnapshot,
        environmentSnapshot,
        fc.func(fate),
        fc.func(fc.boolean()),
        fc.constantFrom('none', 'first', 'last'),
        contexts,
        (first, second, fateOf, isKilled, adding, ctxs) => {
          const before = compileEnvironment(first.flags, first.segments);
          const next: Record<string, SnapshotFlag> = {};
          const changed = new Set<string>();
          const added = adding === 'none' ? [] : Object.keys(second.flags).filter((key) => !Object.hasOwn(first.flags, key));
          const add = () => {
            for (const key of added) {
              setOwn(next, key, second.flags[key]);
              changed.add(key);
            }
          };
          if (adding === 'first') add();
          for (const key of Object.keys(first.flags)) {
            const what = fateOf(key);
            if (what === 'remove') continue;
            // Another flag's entry of the second environment: a real change (an entry's own key is not in it).
            const others = Object.values(second.flags);
            const replacement = others[key.length % others.length];
            setOwn(next, key, what === 'keep' ? first.flags[key] : replacement);
            if (what !== 'keep') changed.add(key);
          }
          if (adding === 'last') add();
          const keys = Object.keys(next);
          const killed = new Set([...keys, 'no-such-flag'].filter((key) => isKilled(key)));
          const fresh = compileEnvironment(next, first.segments);
          const expected = evaluations(fresh, [...keys, 'no-such-flag'], ctxs, killed);
          const byReference = before.withFlags(next, first.flags);
          const sameKeys = keys.length === before.keys.length && keys.every((key, i) => key === before.keys[i]);
          const byChanges = before.withChanges(next, { keys: sameKeys ? before.keys : keys, changed });
          deepStrictEqual(byReference.keys, fresh.keys);
          deepStrictEqual(evaluations(byReference, [...keys, 'no-such-flag'], ctxs, killed), expected);
          deepStrictEqual(evaluations(byChanges, [...keys, 'no-such-flag'], ctxs, killed), expected);
          for (const key of keys) {
            const compiled = before.flag(key);
            if (!changed.has(key) && compiled?.prerequisites === null) strictEqual(byReference.flag(key), compiled, key);
          }
          const firstKeys = Object.keys(first.flags);
          deepStrictEqual(
            evaluations(before, firstKeys, ctxs, killed),
            evaluations(compileEnvironment(first.flags, first.segments), firstKeys, ctxs, killed),
          );
        },
      ),
      runs({ test: 300, fuzz: 20_000 }),
    );
  });
});
