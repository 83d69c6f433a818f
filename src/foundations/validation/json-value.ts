/**
 * Whether arrays and objects nest deeper than `maxDepth` in `value` (a scalar is depth 0, `[]` and `{}` are 1,
 * `[[1]]` is 2). The walk goes no deeper than `maxDepth + 1`, so a hostile value costs no deeper recursion
 * than the limit.
 */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (maxDepth === 0) return true;
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (nestsDeeperThan(item, maxDepth - 1)) return true;
  return false;
}

/**
 * The JSON pointers of the numbers JSON cannot carry in `value` (Infinity, NaN): what a body's 1e309 or a YAML
 * `.inf` parses to, and what every answer would show as null.
 */
export function nonFinitePointers(value: unknown, pointer = '', out: string[] = []): string[] {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) out.push(pointer);
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) nonFinitePointers(value[i], `${pointer}/${i}`, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value))
      nonFinitePointers(item, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`, out);
  }
  return out;
}
