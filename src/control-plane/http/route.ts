import type { EnvironmentName } from '@flagops/core';
import type { Permission } from '../../auth/permissions.js';
import type { Principal } from '../../auth/principal.js';
import type { ApiBodies } from '../../validation/api-bodies.js';
import type { ApiSchemaName } from '../../validation/schema-files.js';
import type { Workspace } from './workspace.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** How a route takes its body: validated against a schema of schemas/api/, any JSON (or none), or none. */
export type BodySpec = ApiSchemaName | 'json' | 'none';

type BodyOf<B extends BodySpec> = B extends ApiSchemaName ? ApiBodies[B] : B extends 'json' ? unknown : undefined;

/** What a handler is given: everything already authenticated, authorized and validated. */
export interface Call<B extends BodySpec = BodySpec> {
  principal: Principal;
  ws: Workspace;
  params: Readonly<Record<string, string>>;
  /** The `:env` path parameter, already checked to be dev, staging or prod. */
  environment: EnvironmentName;
  query: Readonly<Record<string, string | string[] | undefined>>;
  body: BodyOf<B>;
}

export interface Reply {
  status?: number;
  body: unknown;
}

/**
 * One entry of the route table: the permission it needs is stated here and checked by the table's mounting
 * code, in one place, before the handler runs (contract §5).
 */
export interface Route<B extends BodySpec = BodySpec> {
  method: HttpMethod;
  path: string;
  permission: Permission;
  body: B;
  /** Body fields that need a further permission when true (clearKill on a config update needs clear_kill). */
  fieldPermissions?: Readonly<Record<string, Permission>>;
  handle(call: Call<B>): Promise<Reply>;
}

/** Declares a route with its body type inferred from `body`. */
export function route<B extends BodySpec>(spec: Route<B>): Route {
  return spec as unknown as Route;
}
