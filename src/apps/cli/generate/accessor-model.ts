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
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
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

const PYTHON_KEYWORDS = new Set(
  'false none true and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case'.split(
    ' ',
  ),
);

/** `checkout-v2` → `checkout_v2`; a Python keyword gets a trailing underscore. */
export function snakeName(key: string): string {
  const name = words(key).join('_').toLowerCase();
  const safe = /^[0-9]/.test(name) ? `flag_${name}` : name;
  return PYTHON_KEYWORDS.has(safe) ? `${safe}_` : safe;
}

/** The project's name as a type: `shop` → `ShopFlags`. */
export function typeName(slug: string): string {
  return `${pascalName(slug)}Flags`;
}

/** Two flags whose keys give the same name would make code that does not compile: refuse them by name. */
export function checkDistinct(flags: readonly AccessorFlag[], name: (key: string) => string): void {
  const seen = new Map<string, string>();
  for (const flag of flags) {
    const n = name(flag.key);
    const other = seen.get(n);
    if (other !== undefined) throw new Error(`flags ${other} and ${flag.key} would both be named ${n}`);
    seen.set(n, flag.key);
  }
}
