import type { FlagKind, JsonValue, ProjectState } from '@flagops/core';

/** One flag as the generated code names it: key, kind, default and the words of its doc comment. */
export interface AccessorFlag {
  key: string;
  kind: FlagKind;
  /** The flag's defaultValue, or the kind's empty value when the flag has none (`hasDefault` false). */
  defaultValue: JsonValue;
  hasDefault: boolean;
  name?: string;
  description?: string;
  archived: boolean;
}

export interface AccessorProject {
  slug: string;
  flags: AccessorFlag[];
}

const EMPTY: Record<FlagKind, JsonValue> = { boolean: false, string: '', number: 0, json: null };

const byKey = (a: AccessorFlag, b: AccessorFlag) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** A project's flags, sorted by key so the generated file is stable. */
export function accessorProject(slug: string, project: ProjectState): AccessorProject {
  const flags = [...project.flags.values()]
    .map(({ meta }): AccessorFlag => {
      const hasDefault = meta.defaultValue !== undefined && meta.defaultValue !== null;
      return {
        key: meta.key,
        kind: meta.kind,
        defaultValue: hasDefault ? (meta.defaultValue as JsonValue) : EMPTY[meta.kind],
        hasDefault,
        name: meta.name,
        description: meta.description,
        archived: meta.archivedAt !== null && meta.archivedAt !== undefined,
      };
    })
    .sort(byKey);
  return { slug, flags };
}

/** The words of a flag's doc comment: its name, description, default and whether it is archived. */
export function docLines(flag: AccessorFlag): string[] {
  const lines: string[] = [];
  const title = flag.name && flag.name !== flag.key ? `${flag.key} (${flag.name})` : flag.key;
  lines.push(flag.description ? `${title}: ${flag.description}` : `${title}.`);
  lines.push(
    flag.hasDefault
      ? `Default ${JSON.stringify(flag.defaultValue)}, served when the flag cannot be evaluated.`
      : `The flag has no defaultValue: ${JSON.stringify(flag.defaultValue)} is served when it cannot be evaluated.`,
  );
  if (flag.archived) lines.push('Archived: it serves its default value.');
  return lines.flatMap((line) => line.split('\n'));
}

function words(key: string): string[] {
  return key.split(/[^A-Za-z0-9]+/).filter((w) => w !== '');
}

const capital = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

/** `checkout-v2` → `checkoutV2`; a key starting with a digit gets a leading `flag`. */
export function camelName(key: string): string {
  const [first, ...rest] = words(key);
  const name = first + rest.map(capital).join('');
  return /^[0-9]/.test(name) ? `flag${capital(name)}` : name;
}

/** `checkout-v2` → `CheckoutV2` (exported in Go). */
export function pascalName(key: string): string {
  const name = words(key).map(capital).join('');
  return /^[0-9]/.test(name) ? `Flag${name}` : name;
}

/** `checkout-v2` → `checkout_v2`; a key starting with a digit gets a leading `flag_`. */
export function snakeName(key: string): string {
  const name = words(key).join('_').toLowerCase();
  return /^[0-9]/.test(name) ? `flag_${name}` : name;
}

/** The project's name as a type: `shop` → `ShopFlags`. */
export function typeName(slug: string): string {
  return `${pascalName(slug)}Flags`;
}

/**
 * Each flag's accessor name, by key. It is `name(key)`, with a trailing `_` when that is `reserved` (a keyword
 * of the language or a member the generated class has itself: `client` → `client_`). Keys that still give the
 * same name keep it for the first key in key order and add `_2`, `_3`… for the later ones (`a-b` → `aB`,
 * `a.b` → `aB_2`), skipping any name another flag has. Every valid key gets a name, and the names depend only on
 * the project's keys.
 */
export function accessorNames(
  flags: readonly AccessorFlag[],
  name: (key: string) => string,
  reserved: ReadonlySet<string>,
): Map<string, string> {
  const sorted = [...flags].sort(byKey);
  const bases = sorted.map((flag) => {
    const base = name(flag.key);
    return reserved.has(base) ? `${base}_` : base;
  });
  const taken = new Set(bases);
  const names = new Map<string, string>();
  const given = new Set<string>();
  sorted.forEach((flag, i) => {
    const base = bases[i];
    let unique = base;
    for (let n = 2; given.has(unique) || (unique !== base && taken.has(unique)); n++) unique = `${base}_${n}`;
    names.set(flag.key, unique);
    given.add(unique);
  });
  return names;
}
