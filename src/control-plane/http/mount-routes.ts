import type { EnvironmentName } from '@flagops/core';
import type Router from '@koa/router';
import { authorize } from '../../auth/permissions.js';
import { readJsonBody } from '../../http/read-json-body.js';
import { validateBody } from '../../validation/validate-body.js';
import type { ControlPlaneDeps } from '../control-deps.js';
import { authenticate, bearerKeyResolver } from './authenticate.js';
import { environmentParam } from './params.js';
import type { Call, Route } from './route.js';
import { openWorkspace } from './workspace.js';

/**
 * Registers the route table. Every request goes the same way: who is calling (401), which environment
 * (404), may they (403), is the body valid (415/413/400), then the handler. Nothing reaches a service
 * unchecked, and the permission of a route is checked here and nowhere else.
 */
export function mountRoutes(router: Router, routes: readonly Route[], deps: ControlPlaneDeps): void {
  const resolvers = [bearerKeyResolver(deps.keys), ...(deps.principalResolvers ?? [])];
  for (const entry of routes) {
    router.register(entry.path, [entry.method], async (ctx) => {
      const principal = await authenticate(ctx, resolvers);
      const environment = ctx.params.env === undefined ? undefined : environmentParam(ctx.params.env);
      // The environment is the destination of the write: promote into prod needs more than an agent key.
      authorize(principal, entry.permission, environment === undefined ? {} : { environment });
      const raw = entry.body === 'none' ? undefined : await readJsonBody(ctx.req);
      const body = entry.body === 'none' || entry.body === 'json' ? raw : validateBody(entry.body, raw);
      for (const [field, permission] of Object.entries(entry.fieldPermissions ?? {})) {
        if ((body as Record<string, unknown>)[field] === true)
          authorize(principal, permission, environment === undefined ? {} : { environment });
      }
      const call: Call = {
        principal,
        ws: await openWorkspace(deps, principal),
        params: ctx.params,
        environment: environment as EnvironmentName,
        query: ctx.query,
        body: body as Call['body'],
      };
      const reply = await entry.handle(call);
      ctx.status = reply.status ?? 200;
      ctx.body = reply.body;
    });
  }
}
