import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Pusher } from '@flagops/core';
import { nodeEntry } from './node-entry.js';
import type { PushBudgetContext } from './push-budgets.js';
import type { PushContext } from './push-check.js';
import type { PushOnTarget } from './push-on.js';
import type { PushLimits } from './push-permissions.js';

/** Set in the environment of pushes that come through the service; the hook checks only those (docs/deployment.md). */
export const PUSH_CHECK_ENV = 'FLAGOPS_PUSH_CHECK';
/** The key that pushes, as JSON `{ type, keyPrefix, name }`: what the push is held to and recorded with. */
export const PUSHER_ENV = 'FLAGOPS_PUSHER';
export const PUSH_LOG_ENV = 'FLAGOPS_PUSH_LOG';
export const PROJECT_LIMIT_ENV = 'FLAGOPS_PLAN_PROJECT_LIMIT';
/** A limited key's projects (slugs) and environments, as JSON: the files the push may touch. */
export const PUSH_LIMITS_ENV = 'FLAGOPS_PUSH_LIMITS';
/** The service's time and the pusher's use of the budgets, as JSON (PushBudgetContext). */
export const BUDGET_USE_ENV = 'FLAGOPS_BUDGET_USE';
/** Remote mode: the git remote an accepted push must reach before main moves, and how long it may take, as JSON (PushOnTarget). */
export const PUSH_ON_ENV = 'FLAGOPS_PUSH_ON';

/** The environment git passes to the hook for a push through the service. */
export function pushContextEnv(context: PushContext): Record<string, string> {
  const env: Record<string, string> = { [PUSH_CHECK_ENV]: '1', [PUSHER_ENV]: JSON.stringify(context.pusher) };
  if (context.pushLog !== undefined) env[PUSH_LOG_ENV] = context.pushLog;
  if (context.projectLimit !== undefined) env[PROJECT_LIMIT_ENV] = String(context.projectLimit);
  if (context.limits !== undefined) env[PUSH_LIMITS_ENV] = JSON.stringify(context.limits);
  if (context.budget !== undefined) env[BUDGET_USE_ENV] = JSON.stringify(context.budget);
  if (context.pushOn !== undefined) env[PUSH_ON_ENV] = JSON.stringify(context.pushOn);
  return env;
}

/** What pushContextEnv set, or undefined when the hook runs for a push that did not come through the service. */
export function readPushContext(env: NodeJS.ProcessEnv): PushContext | undefined {
  if (env[PUSH_CHECK_ENV] !== '1' || !env[PUSHER_ENV]) return undefined;
  const pusher = JSON.parse(env[PUSHER_ENV]) as Pusher;
  const limit = env[PROJECT_LIMIT_ENV];
  const budget = env[BUDGET_USE_ENV] ? (JSON.parse(env[BUDGET_USE_ENV]) as PushBudgetContext) : undefined;
  return {
    pusher,
    ...(env[PUSH_LIMITS_ENV] ? { limits: JSON.parse(env[PUSH_LIMITS_ENV]) as PushLimits } : {}),
    ...(budget ? { budget } : {}),
    ...(env[PUSH_ON_ENV] ? { pushOn: JSON.parse(env[PUSH_ON_ENV]) as PushOnTarget } : {}),
    ...(env[PUSH_LOG_ENV] ? { pushLog: env[PUSH_LOG_ENV] } : {}),
    ...(limit !== undefined && limit !== '' && Number.isInteger(Number(limit)) ? { projectLimit: Number(limit) } : {}),
  };
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** How the hook runs `flagops validate-push`: the CLI entry of this package (node-entry.ts). */
export function validatorCommand(): string[] {
  return [...nodeEntry(import.meta.url, '../cli/main'), 'validate-push'];
}

export function hookScript(command: readonly string[] = validatorCommand()): string {
  return `#!/bin/sh
# Installed by flagops: checks pushes that come through the service (git over HTTP): validity, limits, and
# the pushing key's permissions. Pushes made on this machine straight into the repository are not checked
# here: what they put on main is checked when it arrives, and an invalid file is never served.
[ "$${PUSH_CHECK_ENV}" = "1" ] || exit 0
exec ${command.map(quote).join(' ')}
`;
}

/** Writes hooks/pre-receive unless it already has this content; atomic, so a push never runs half a script. */
export async function installPreReceiveHook(gitdir: string, script = hookScript()): Promise<void> {
  const file = path.join(gitdir, 'hooks', 'pre-receive');
  const current = await readFile(file, 'utf8').catch(() => null);
  if (current === script) return;
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, script, { mode: 0o755 });
  await chmod(tmp, 0o755);
  await rename(tmp, file);
}
