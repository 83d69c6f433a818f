import { type EnvironmentName, isEnvironmentName } from '@flagops/core';
import type Router from '@koa/router';
import type Koa from 'koa';
import { authorize, authorizeOrProposal, type Permission } from '../../foundations/auth/permissions.js';
import type { Principal } from '../../foundations/auth/principal.js';
import {
  FlagopsError,
  type ForbiddenError,
  InvalidInputError,
  NotFoundError,
  UnauthorizedError,
  VersionConflictError,
} from '../../foundations/errors/kinds.js';
import { readJsonBody } from '../../foundations/http/read-json-body.js';
import { type ApiBodies, onlyClearsKill } from '../../foundations/validation/api-bodies.js';
import type { ApiSchemaName } from '../../foundations/validation/schema-files.js';
import { validateBody } from '../../foundations/validation/validate-body.js';
import type { ControlPlaneDeps } from './deps.js';
import { authenticate, bearerKeyResolver, gitKeyResolver, type PrincipalResolver } from './principal-resolvers.js';
import { openWorkspace, type Workspace } from './workspace.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * How a route takes its body: validated against a schema of schemas/api/ (`name?`: the same, or no body at
 * all), any JSON (or none), or none.
 */
export type BodySpec = ApiSchemaName | `${ApiSchemaName}?` | 'json' | 'none';

type BodyOf<B extends BodySpec> = B extends ApiSchemaName
  ? ApiBodies[B]
  : B extends `${infer N extends ApiSchemaName}?`
    ? ApiBodies[N] | undefined
    : B extends 'json'
      ? unknown
      : undefined;

/** The body of a request, checked as the route says. */
function checkedBody(spec: BodySpec, raw: unknown): unknown {
  if (spec === 'none' || spec === 'json') return raw;
  if (spec.endsWith('?')) return raw === undefined ? undefined : validateBody(spec.slice(0, -1) as ApiSchemaName, raw);
  return validateBody(spec as ApiSchemaName, raw);
}

/** What a handler is given: everything already authenticated, authorized and validated. */
export interface Call<B extends BodySpec = BodySpec> {
  /** The request, for a handler that answers itself (a stream, git): see ANSWERED. */
  ctx: Koa.Context;
  principal: Principal;
  ws: Workspace;
  params: Readonly<Record<string, string>>;
  /** The `:env` path parameter, already checked to be dev, staging or prod. */
  environment: EnvironmentName;
  query: Readonly<Record<string, string | string[] | undefined>>;
  body: BodyOf<B>;
  /**
   * For a route that may become a proposal (`proposable`): why the credential may not perform it directly
   * into this environment. The handler refuses with it unless the project turns the change into a proposal.
   */
  refusal?: ForbiddenError;
  /** The control plane's origin as the caller reached it (`http://127.0.0.1:4000`), for URLs an answer gives out. */
  origin: string;
}

export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Readonly<Record<string, string>>;
}

/** What a handler returns when it has answered on `call.ctx` itself (an event stream, git's own protocol). */
export const ANSWERED: Readonly<{ answered: true }> = Object.freeze({ answered: true });

/**
 * How a route's caller proves who it is. `api`: an admin or agent key as a bearer token, or a dashboard session.
 * `git`: a key as the password of HTTP basic auth (what git sends when the URL or a credential helper has it)
 * or as a bearer token; a 401 asks for it (`WWW-Authenticate`), so git prompts.
 */
export type Credentials = 'api' | 'git';

const GIT_CHALLENGE = 'Basic realm="flagops", charset="UTF-8"';

/**
 * One entry of the route table: the permission it needs is stated here and checked by the table's mounting
 * code, in one place, before the handler runs
 * (docs/credentials.md).
 */
export interface Route<B extends BodySpec = BodySpec> {
  method: HttpMethod | readonly HttpMethod[];
  path: string;
  permission: Permission;
  body: B;
  /** Default `api`. */
  credentials?: Credentials;
  /** Body fields that need a further permission when true (clearKill on a config update needs clear_kill). */
  fieldPermissions?: Readonly<Record<string, Permission>>;
  /**
   * A permission the table grants only as a proposal does not answer 403 at once: the handler gets the refusal
   * as `refusal`, because the project may make the change a proposal instead (an agent's promotion into a
   * protected prod), and must refuse with it otherwise. A permission refused outright is 403 here.
   */
  proposable?: boolean;
  /**
   * The route has no `:env`, yet acts in one environment that its resource names (a trigger, a proposal): a
   * credential limited to environments is checked by the handler, with `ws.authorize`, once it has read it.
   */
  environmentFromResource?: boolean;
  handle(call: Call<B>): Promise<Reply | typeof ANSWERED> | Reply | typeof ANSWERED;
}

/** Declares a route with its body type inferred from `body`. */
export function route<B extends BodySpec>(spec: Route<B>): Route {
  return spec as unknown as Route;
}

/** An `:env` path segment: an unknown environment is a resource that does not exist (404). */
export function environmentParam(value: string): EnvironmentName {
  if (!isEnvironmentName(value))
    throw new FlagopsError('not_found', `environment ${JSON.stringify(value)} not found; environments are dev, staging and prod`);
  return value;
}

type Query = Readonly<Record<string, string | string[] | undefined>>;

/** A query parameter given at most once; an empty value counts as absent. */
export function optionalQuery(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new InvalidInputError(`${name}: must be given at most once`, name);
  return value === undefined || value === '' ? undefined : value;
}

export function requiredQuery(query: Query, name: string): string {
  const value = optionalQuery(query, name);
  if (value === undefined) throw new InvalidInputError(`${name}: the query parameter is required`, name);
  return value;
}

/** A whole number query parameter within [min, max], or `fallback` when absent. */
export function integerQuery(query: Query, name: string, options: { min: number; max: number; fallback: number }): number {
  const value = optionalQuery(query, name);
  if (value === undefined) return options.fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < options.min || n > options.max) {
    throw new InvalidInputError(`${name}: must be a whole number from ${options.min} to ${options.max}`, name);
  }
  return n;
}

/**
 * Authorizes a call of `entry` into `environment` (the destination of the write: promote into prod needs more
 * than an agent key), throwing ForbiddenError; but where the table grants a proposable route's permission only
 * as a proposal, the refusal is returned, for the handler to refuse with unless the project makes the change a
 * proposal. A preview asks the same of the write it previews.
 */
export function authorizeRoute(
  principal: Principal,
  entry: Pick<Route, 'permission' | 'proposable' | 'environmentFromResource'>,
  environment: EnvironmentName | undefined,
): ForbiddenError | undefined {
  const context = environment === undefined ? { environmentLater: entry.environmentFromResource } : { environment };
  if (entry.proposable) return authorizeOrProposal(principal, entry.permission, context);
  authorize(principal, entry.permission, context);
  return undefined;
}

/** Throws ForbiddenError when a field of the body needs a permission the principal lacks (clearKill: clear_kill). */
export function authorizeFields(
  principal: Principal,
  entry: Pick<Route, 'fieldPermissions'>,
  environment: EnvironmentName | undefined,
  body: unknown,
): void {
  for (const [field, permission] of Object.entries(entry.fieldPermissions ?? {})) {
    if ((body as Record<string, unknown> | undefined)?.[field] === true)
      authorize(principal, permission, environment === undefined ? {} : { environment });
  }
}

/**
 * A route that takes no body (an archive, a deletion) is sent none, or an empty JSON object: a body it would
 * ignore is refused (with the checks every body gets: 415, 413, 400), so a client sending `expectedVersion`
 * there learns that it is not checked rather than see the change made regardless.
 */
function noBody(body: unknown): undefined {
  if (body === undefined || (isPlainObject(body) && Object.keys(body).length === 0)) return undefined;
  const fields = isPlainObject(body)
    ? `: unknown field${Object.keys(body).length > 1 ? 's' : ''} ${Object.keys(body).slice(0, 5).join(', ')}`
    : '';
  throw new InvalidInputError(`this route takes no body${fields}`, 'body');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Registers the route table. Every request goes the same way: who is calling (401), which environment
 * (404), may they (403), is the body valid (415/413/400), then the handler. Nothing reaches a service
 * unchecked, and the permission of a route is checked here and nowhere else.
 */
export function mountRoutes(router: Router, routes: readonly Route[], deps: ControlPlaneDeps): void {
  const resolvers: Readonly<Record<Credentials, readonly PrincipalResolver[]>> = {
    api: [bearerKeyResolver(deps.keys), ...(deps.principalResolvers ?? [])],
    git: [gitKeyResolver(deps.keys)],
  };
  for (const entry of routes) {
    const credentials = entry.credentials ?? 'api';
    const methods = typeof entry.method === 'string' ? [entry.method] : [...entry.method];
    router.register(entry.path, methods, async (ctx) => {
      let principal: Principal;
      try {
        principal = await authenticate(ctx, resolvers[credentials]);
      } catch (err) {
        if (credentials === 'git' && err instanceof UnauthorizedError) ctx.set('WWW-Authenticate', GIT_CHALLENGE);
        throw err;
      }
      const environment = ctx.params.env === undefined ? undefined : environmentParam(ctx.params.env);
      const refusal = authorizeRoute(principal, entry, environment);
      const raw =
        entry.body !== 'none'
          ? await readJsonBody(ctx.req)
          : credentials === 'api' && !isRead(ctx.method)
            ? noBody(await readJsonBody(ctx.req))
            : undefined;
      const body = checkedBody(entry.body, raw);
      authorizeFields(principal, entry, environment, body);
      // A change made while the shared database is out of reach would not reach the other control planes: refused
      // (503), but for a kill, which must never wait for anything but the repository it is committed to. Git's
      // own requests are left to its push check, which records the pusher in the database.
      const changes = credentials === 'api' && !isRead(ctx.method) && entry.permission !== 'kill' && !onlyClearsKill(body);
      const refused = changes ? deps.writesRefused?.() : undefined;
      if (refused) throw refused;
      // Nothing of the organisation read yet (its git remote): reads, writes and kills alike would act on an empty
      // state, and replicas would take it for one. 503, so they try again or go to another control plane.
      const starting = deps.holder.noState(principal.org);
      if (starting) throw starting;
      const call: Call = {
        ctx,
        principal,
        ws: await openWorkspace(deps, principal),
        params: ctx.params,
        environment: environment as EnvironmentName,
        query: ctx.query,
        body: body as Call['body'],
        refusal,
        origin: `${ctx.protocol}://${ctx.host}`,
      };
      const reply = await Promise.resolve(entry.handle(call)).catch(async (err: unknown) => {
        // Refused before anything changed, on what main held: asked again once main holds what the remote has.
        const stale = err instanceof NotFoundError || err instanceof VersionConflictError;
        if (stale && (await deps.catchUp?.(principal.org))) return entry.handle(call);
        throw err;
      });
      if ('answered' in reply) return;
      if (reply.headers) ctx.set(reply.headers);
      ctx.status = reply.status ?? 200;
      if (reply.body !== undefined) ctx.body = reply.body;
    });
  }
}

const isRead = (method: string) => method === 'GET' || method === 'HEAD';

/** What another part (the dashboard, src/apps/dashboard) adds: routes run through the same checks, and its own handlers. */
export interface ControlAppExtension {
  routes?: readonly Route[];
  register?(router: Router): void;
}
