// Keys kept in String sort order (what assembleState checks flags in), edited one at a time.

/** Name → its keys in sorted order, without an array for the usual group of one. */
export class SortedGroups {
  private readonly groups = new Map<string, string | string[]>();

  add(name: string, key: string): void {
    const group = this.groups.get(name);
    if (group === undefined) this.groups.set(name, key);
    else if (typeof group === 'string') this.groups.set(name, group < key ? [group, key] : [key, group]);
    else insertSorted(group, key);
  }

  remove(name: string, key: string): void {
    const group = this.groups.get(name);
    if (group === key) this.groups.delete(name);
    else if (Array.isArray(group)) {
      removeSorted(group, key);
      if (group.length === 1) this.groups.set(name, group[0]);
    }
  }

  first(name: string): string | undefined {
    const group = this.groups.get(name);
    return typeof group === 'string' ? group : group?.[0];
  }

  members(name: string): readonly string[] {
    const group = this.groups.get(name);
    return typeof group === 'string' ? [group] : (group ?? []);
  }
}

function lowerBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function insertSorted(sorted: string[], key: string): void {
  // Files come in tree order, which is nearly always key order: appending is the common case.
  if (sorted.length === 0 || sorted[sorted.length - 1] < key) sorted.push(key);
  else sorted.splice(lowerBound(sorted, key), 0, key);
}

export function removeSorted(sorted: string[], key: string): void {
  const at = lowerBound(sorted, key);
  if (sorted[at] === key) sorted.splice(at, 1);
}
