import type { PrincipalResolver } from '../../control-plane/http/authenticate.js';
import { UnauthorizedError } from '../../errors/kinds.js';
import { checkCsrf } from '../http/csrf.js';
import { lookUpSession, type SessionDeps, sessionPrincipal } from './current-session.js';

/**
 * The session cookie as a control-plane credential (contract §5: as an admin key, except key management).
 * Plugged in after the bearer resolver, so it is consulted only for requests without Authorization. A
 * state-changing request must pass the CSRF checks before anything reads its body or acts on it.
 */
export function sessionResolver(deps: SessionDeps): PrincipalResolver {
  return (ctx) => {
    const found = lookUpSession(ctx, deps);
    if (found.kind === 'none') return null;
    if (found.kind === 'invalid') throw new UnauthorizedError('the session has expired or was signed out; sign in again');
    checkCsrf(ctx, found.token);
    return sessionPrincipal(found);
  };
}
