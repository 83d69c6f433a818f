import type { SessionRecord } from '../../../foundations/state/index.js';
import type { UserService, UserView } from '../users/user-service.js';

/** The user id of an OpenID Connect session: the provider's subject. No password user's id starts so (`usr_…`). */
export const OIDC_USER = 'oidc:';

export function isOidcSession(session: Pick<SessionRecord, 'userId'>): boolean {
  return session.userId.startsWith(OIDC_USER);
}

/**
 * The person a session signs in. A password user is read from the users, so removing the user ends their
 * sessions; a person signed in with OpenID Connect has no account here, and the session record itself says who
 * they are: their email, else their preferred_username (the subject when the provider gave neither).
 */
export function userOfSession(session: SessionRecord, users: Pick<UserService, 'byId'>): UserView | undefined {
  if (!isOidcSession(session)) return users.byId(session.userId);
  const name = session.email ?? session.username ?? session.userId.slice(OIDC_USER.length);
  return { id: session.userId, org: session.org, username: name, name, createdAt: session.createdAt };
}
