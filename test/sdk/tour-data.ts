import { readFileSync } from 'node:fs';
import type { FlagKind, JsonValue, Rule } from '@flagops/core';
import type { FlagSpec } from '../eval-server/harness.js';

/**
 * The flags the README's tour creates in project `shop`, read from the README itself: each flag it creates
 * (`VAR=$(curl … /projects/$PROJECT/flags -d '{…}')`) with the prod config it then sends
 * (`PUT $API/flags/$VAR/environments/prod/config -d '{…}'`, the kill clearing aside). The docs' examples run
 * against exactly this, so they run on the data a reader who followed the tour has.
 */
export function tourFlags(): FlagSpec[] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const flags = new Map<string, FlagSpec>();
  for (const m of readme.matchAll(/(\w+)=\$\(curl [^']*?\/projects\/\$PROJECT\/flags(?: \\\n\s*)? -d '(\{[^']*\})'/g)) {
    const body = JSON.parse(m[2]) as { key: string; kind?: FlagKind; defaultValue?: JsonValue };
    flags.set(m[1], { key: body.key, kind: body.kind ?? 'boolean', defaultValue: body.defaultValue, enabled: false, rolloutPct: 0 });
  }
  for (const m of readme.matchAll(/-X PUT \$API\/flags\/\$(\w+)\/environments\/prod\/config -d '(\{[^']*\})'/g)) {
    const body = JSON.parse(m[2]) as { enabled?: boolean; rolloutPct?: number; valueOn?: JsonValue; valueOff?: JsonValue; rules?: Rule[] };
    const flag = flags.get(m[1]);
    if (!flag) throw new Error(`README: PUT config of $${m[1]}, a flag the tour does not create`);
    if ('clearKill' in body) continue;
    Object.assign(flag, body, { version: 2 });
    delete (flag as { expectedVersion?: number }).expectedVersion;
  }
  for (const flag of flags.values()) {
    if (flag.kind !== 'boolean' && flag.valueOn === undefined)
      Object.assign(flag, { valueOn: flag.defaultValue, valueOff: flag.defaultValue });
  }
  return [...flags.values()];
}
