/** A key of the organisation as the dashboard may show it: never the key, only its prefix, kind and name. */
export interface KeyName {
  prefix: string;
  kind: 'admin' | 'agent' | 'sdk';
  name?: string;
}

const KIND_OF_PREFIX: Readonly<Record<string, KeyName['kind']>> = { svc_adm_: 'admin', svc_agt_: 'agent', svc_sdk_: 'sdk' };

/** The kind a key prefix names (`svc_agt_…` is an agent key), or null for anything else (a person's name). */
export function kindOfPrefix(text: string): KeyName['kind'] | null {
  return KIND_OF_PREFIX[text.slice(0, 8)] ?? null;
}

/**
 * An actor recorded as a key prefix (kills.yaml's `killedBy` for key actions): the key's name when the
 * organisation has the key, else "an agent key"; the prefix always beside it. A person's name stays as it is.
 */
export function keyActor(recorded: string, names: ReadonlyMap<string, KeyName>): { name: string; keyPrefix?: string } {
  const kind = kindOfPrefix(recorded);
  if (kind === null) return { name: recorded };
  const name = names.get(recorded)?.name;
  return { name: name && name !== '' ? name : `an ${kind} key`, keyPrefix: recorded };
}
