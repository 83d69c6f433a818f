import type { Actor } from '@flagops/core';
import type { Principal } from '../../auth/principal.js';

/** The commit author and audit actor of a principal: keys are attributed by their prefix (service-spec §1). */
export function actorOf(principal: Principal): Actor {
  // A session's prefix is its person's username (src/dashboard): their commits carry it, so the git log tells
  // two people of the same name apart.
  if (principal.kind === 'session') return { type: 'session', name: principal.name, email: sessionEmail(principal.prefix) };
  if (principal.kind === 'sdk') throw new TypeError('an sdk key never acts on the control plane');
  return { type: principal.kind, name: principal.name, keyPrefix: principal.prefix };
}

/** A username that is an email address is used as is; any other gets a domain that says where it comes from. */
function sessionEmail(username: string): string {
  if (username === '') return 'session@users.flagops';
  return username.includes('@') ? username : `${username}@users.flagops`;
}
