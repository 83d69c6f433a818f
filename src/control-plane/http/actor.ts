import type { Principal } from '../../auth/principal.js';
import type { Actor } from '../../model/types.js';

/** The commit author and audit actor of a principal: keys are attributed by their prefix (service-spec §1). */
export function actorOf(principal: Principal): Actor {
  if (principal.kind === 'session') return { type: 'session', name: principal.name };
  if (principal.kind === 'sdk') throw new TypeError('an sdk key never acts on the control plane');
  return { type: principal.kind, name: principal.name, keyPrefix: principal.prefix };
}
