/**
 * The shape of a snapshot's flag and segment entries, checked before they are compiled: a bootstrap file is
 * input like any other, and an entry whose fields have the wrong types (`rules: [5]`, `enabled: "yes"`) would
 * otherwise compile into something that serves a value no flag configuration says. Fields absent are left to
 * the evaluation core's defaults; fields present must have the type the API gives them.
 */

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function checkType(where: string, value: unknown, type: 'boolean' | 'number' | 'string'): void {
  if (value === undefined || typeof value === type) {
    if (type === 'number' && value !== undefined && !Number.isFinite(value)) throw new Error(`${where} is not a finite number`);
    return;
  }
  throw new Error(`${where} is not a ${type}`);
}

/** `value`, when present, as a list of objects each checked by `check`. */
function checkList(where: string, value: unknown, check: (where: string, item: Record<string, unknown>) => void = () => {}): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw new Error(`${where} is not a list`);
  for (const [i, item] of value.entries()) {
    if (!isPlainObject(item)) throw new Error(`${where}[${i}] is not an object`);
    check(`${where}[${i}]`, item);
  }
}

function checkRule(where: string, rule: Record<string, unknown>): void {
  checkList(`${where}.conditions`, rule.conditions);
  checkType(`${where}.rolloutPct`, rule.rolloutPct, 'number');
}

function checkVariant(where: string, variant: Record<string, unknown>): void {
  checkType(`${where}.name`, variant.name, 'string');
  checkType(`${where}.weight`, variant.weight, 'number');
}

function checkPrerequisite(where: string, prerequisite: Record<string, unknown>): void {
  checkType(`${where}.flag`, prerequisite.flag, 'string');
  checkType(`${where}.variation`, prerequisite.variation, 'string');
}

/** Throws an error naming the field when the entry of flag `key` is not shaped as the API serves it. */
export function checkFlagEntry(key: string, entry: Record<string, unknown>): void {
  const where = `flags.${key}`;
  for (const field of ['enabled', 'killed', 'archived'] as const) checkType(`${where}.${field}`, entry[field], 'boolean');
  checkType(`${where}.rolloutPct`, entry.rolloutPct, 'number');
  checkList(`${where}.rules`, entry.rules, checkRule);
  checkList(`${where}.variants`, entry.variants, checkVariant);
  checkList(`${where}.prerequisites`, entry.prerequisites, checkPrerequisite);
}

/** Throws an error naming the field when the entry of segment `key` is not shaped as the API serves it. */
export function checkSegmentEntry(key: string, entry: Record<string, unknown>): void {
  const where = `segments.${key}`;
  if (entry.userIds !== undefined) {
    if (!Array.isArray(entry.userIds)) throw new Error(`${where}.userIds is not a list`);
    for (const [i, id] of entry.userIds.entries()) checkType(`${where}.userIds[${i}]`, id, 'string');
  }
  checkList(`${where}.conditions`, entry.conditions);
}
