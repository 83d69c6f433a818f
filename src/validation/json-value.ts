/**
 * Why `value` cannot be a flag value, or undefined: arrays and objects nested deeper than `maxDepth` (a scalar
 * is depth 0, `[]` and `{}` are 1, `[[1]]` is 2), or a number JSON cannot carry (a body's 1e309 parses to
 * Infinity, which every answer would then show as null). The walk goes no deeper than `maxDepth + 1`, so a
 * hostile value costs no deeper recursion than the limit.
 */
export function jsonValueProblem(value: unknown, maxDepth: number): string | undefined {
  const found = walk(value, maxDepth);
  if (found === 'too deep') return `must not nest arrays and objects more than ${maxDepth} levels deep`;
  if (found === 'not finite') return 'must hold finite numbers only (JSON has no Infinity: 1e309 is too large)';
  return undefined;
}

function walk(value: unknown, levelsLeft: number): 'too deep' | 'not finite' | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'not finite';
  if (value === null || typeof value !== 'object') return undefined;
  if (levelsLeft === 0) return 'too deep';
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    const found = walk(item, levelsLeft - 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
