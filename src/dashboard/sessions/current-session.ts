import type { Context } from 'koa';
import type { Principal } from '../../auth/principal.js';
import { readSessionToken } from '../http/session-cookie.js';
import type { UserView } from '../users/user-file.js';
import type { UserStore } from '../users/user-store.js';
import type { SessionRecord } from './session-file.js';
import type { SessionStore } from './session-store.js';

export interface SessionDeps {
  sessions: SessionStore;
  users: UserStore;
}

export interface CurrentSession {
  token: string;
  session: SessionRecord;
  user: UserView;
}

export type SessionLookup = { kind: 'none' } | { kind: 'invalid'; token: string } | ({ kind: 'live' } & CurrentSession);

/** What the request's cookie says: no cookie, a cookie that no longer signs anyone in, or a live session. */
export function lookUpSession(ctx: Context, deps: SessionDeps): SessionLookup {
  const token = readSessionToken(ctx.get('cookie'));
  if (token === null) return { kind: 'none' };
  const session = deps.sessions.resolve(token);
  // A removed user's sessions are revoked too; checking here also covers a user removed by hand from the file.
  const user = session && deps.users.byId(session.userId);
  if (!session || !user || user.org !== session.org) return { kind: 'invalid', token };
  return { kind: 'live', token, session, user };
}

/**
 * The principal of a session: acts as its person. `prefix` carries the username, the one non-secret identifier a
 * session has; the actor (src/control-plane/http/actor.ts) makes it the commit author's address.
 */
export function sessionPrincipal({ session, user }: CurrentSession): Principal {
  return Object.freeze({ org: session.org, kind: 'session', keyId: session.id, prefix: user.username, name: user.name });
}
