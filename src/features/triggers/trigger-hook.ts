import type Router from '@koa/router';
import type { AuthGuard } from '../../foundations/auth/auth-guard.js';
import { NotFoundError } from '../../foundations/errors/kinds.js';
import { readJsonBody } from '../../foundations/http/read-json-body.js';
import type { RepositoryRegistry } from '../../foundations/storage/index.js';
import type { KillSwitch } from '../kill/kill-switch.js';
import { readAlertPayload } from './alert-payload.js';
import { fireTrigger } from './fire-trigger.js';
import type { TriggerService } from './trigger-service.js';

export interface TriggerHookDeps {
  triggers: TriggerService;
  guard: AuthGuard;
  repos: RepositoryRegistry;
  killSwitch: KillSwitch;
}

/**
 * `POST /hooks/triggers/<id>/<secret>` on the control port: no key, the secret is the credential. A wrong
 * secret, or an unknown or deleted trigger, is 404 and counts against the caller's address like a wrong key
 * (an address that keeps guessing is answered 429). Then the body, as every API body: JSON (415 otherwise), at
 * most 1 MiB (413). Answers 202 once the kill is served (or at once for a resolved alert).
 */
export function registerTriggerHook(router: Router, deps: TriggerHookDeps): void {
  router.post('/hooks/triggers/:id/:secret', async (ctx) => {
    const { id, secret } = ctx.params;
    const record = deps.guard.checkKey(ctx.req, 'trigger URL', { keyPrefix: id.slice(0, 24) }, () => deps.triggers.verify(id, secret));
    if (!record) throw new NotFoundError('trigger');
    const payload = readAlertPayload(await readJsonBody(ctx.req));
    ctx.status = 202;
    ctx.body = { outcome: await fireTrigger(deps, record, payload) };
  });
}
