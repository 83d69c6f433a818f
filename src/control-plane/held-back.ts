import { InvalidInRepositoryError } from '../errors/kinds.js';
import { invalidFile } from '../repository/held-units.js';
import { heldBackBy, type ServedState } from '../storage/served-state.js';

/**
 * Refuses a write to a flag (or, without `key`, to a project) that an invalid file on main holds back: it
 * would be committed and not served, so nothing is committed until the file is fixed. Kills never ask.
 */
export function refuseHeldBack(served: ServedState, slug: string, key?: string): void {
  const held = heldBackBy(served, slug, key);
  if (held.length === 0) return;
  throw new InvalidInRepositoryError(key === undefined ? `project "${slug}"` : `flag "${key}"`, held.map(invalidFile));
}
