/**
 * How deeply arrays and objects nest in a JSON value (a scalar is 0, `[]` and `{}` are 1, `[[1]]` is 2), counted
 * no further than `limit + 1`: the walk stops there, so a hostile value costs no deeper recursion than the limit.
 */
export function nestingDepth(value: unknown, limit: number): number {
  if (value === null || typeof value !== 'object') return 0;
  if (limit < 0) return 1;
  let deepest = 0;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    deepest = Math.max(deepest, nestingDepth(item, limit - 1));
    if (deepest > limit - 1) break;
  }
  return deepest + 1;
}
