import type { Api } from '../api.js';
import { h } from '../dom.js';
import { type KeyName, keyActor, kindOfPrefix } from '../logic/actors.js';
import type { FlagView } from '../types.js';

/** The names of the organisation's keys by prefix, read once per sign-in (GET /dashboard/api/key-names). */
let known: ReadonlyMap<string, KeyName> = new Map();

export async function loadKeyNames(api: Api): Promise<void> {
  try {
    const { keys } = await api.get<{ keys: KeyName[] }>('/dashboard/api/key-names');
    known = new Map(keys.map((k) => [k.prefix, k]));
  } catch {
    known = new Map(); // names are a courtesy: without them a key is shown by its kind and prefix
  }
}

/** Prefixes a fresh read did not name either (a kill imported from elsewhere): not asked about again. */
const missing = new Set<string>();

/**
 * Reads the key names again when these flags' kills name a key this page does not know yet (one created
 * after sign-in), so a kill by a new agent key shows the key's name at once.
 */
export async function learnKeyNames(api: Api, flags: readonly FlagView[]): Promise<void> {
  const unknown = flags
    .flatMap((f) => Object.values(f.environments).map((e) => e.killedBy ?? ''))
    .filter((by) => kindOfPrefix(by) !== null && !known.has(by) && !missing.has(by));
  if (unknown.length === 0) return;
  await loadKeyNames(api);
  for (const by of unknown) if (!known.has(by)) missing.add(by);
}

/**
 * Who did something, as a person reads it: the name first, a key's prefix beside it in small type.
 * `killedBy` holds a key's prefix for key actions and a person's name otherwise.
 */
export function actorNode(killedBy: string): HTMLElement {
  const actor = keyActor(killedBy, known);
  return h(
    'span',
    { class: 'actor-name' },
    h('strong', null, actor.name),
    actor.keyPrefix ? h('span', { class: 'key-prefix mono', title: 'key prefix' }, ` ${actor.keyPrefix}`) : null,
  );
}

export function actorPlain(killedBy: string): string {
  const actor = keyActor(killedBy, known);
  return actor.keyPrefix ? `${actor.name} (${actor.keyPrefix})` : actor.name;
}
