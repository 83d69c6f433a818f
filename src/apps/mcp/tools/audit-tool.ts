import { AUDIT_ACTIONS, type AuditEntry } from '@flagops/core';
import { z } from 'zod';
import { escapedControls } from '../../../foundations/validation/one-line.js';
import type { AuditQuery } from '../api-types.js';
import { defineTool, toolSuccess } from './define-tool.js';
import { environment, flagKey } from './inputs.js';

/** "agent svc_agt_3kq9x2ab (deploy-bot)": the audit trail identifies a key's action by its prefix. */
function actorText(actor: Pick<AuditEntry['actor'], 'type' | 'keyPrefix' | 'name'>): string {
  const parts: string[] = [actor.type];
  if (actor.keyPrefix) parts.push(actor.keyPrefix);
  // The scheduler's name is its type: "by scheduler", not "by scheduler scheduler".
  if (actor.name && actor.name !== actor.keyPrefix && actor.name !== actor.type)
    parts.push(actor.keyPrefix ? `(${actor.name})` : actor.name);
  return parts.join(' ');
}

/**
 * One audit entry in one line: when, what, where, who, why, and the commit to look it up in git. A line break in
 * the reason (or any free text) is shown escaped, so no text can show an entry that is not there.
 */
export function auditEntryLine(entry: AuditEntry): string {
  const what: string[] = [entry.action];
  if (entry.flagKey) what.push(entry.flagKey);
  else if (entry.projectSlug) what.push(`project ${entry.projectSlug}`);
  if (entry.fromEnvironment && entry.environment) what.push(`${entry.fromEnvironment} → ${entry.environment}`);
  else if (entry.environment) what.push(`in ${entry.environment}`);
  const reason = entry.reason ? ` — reason: ${entry.reason}` : '';
  // A pushed commit's author is what the pusher claimed; the credential that pushed it is what the service saw.
  const pushed = entry.pushedBy ? `, pushed by ${actorText(entry.pushedBy)}` : '';
  return escapedControls(`${entry.at} ${what.join(' ')} by ${actorText(entry.actor)}${pushed}${reason} [commit ${entry.id.slice(0, 12)}]`);
}

export const getAuditLog = defineTool({
  name: 'get_audit_log',
  title: 'Read the audit trail',
  description: [
    'Reads the audit trail of the project, newest first: kills, kill clears, promotions, config updates, flag creates and edits, including changes pushed to git by engineers.',
    'Each entry says when, what, which flag and environment, who (agent actions show the agent key prefix) and the reason given.',
    'Read-only. Filter by flag key, environment and action; page with the nextCursor of the previous answer.',
  ].join(' '),
  input: {
    key: flagKey.optional().describe('Only entries of this flag (a flag deleted since included).'),
    env: environment.optional().describe('Only entries in this environment.'),
    action: z.enum(AUDIT_ACTIONS).optional().describe('Only this kind of change, e.g. kill or promote.'),
    limit: z.number().int().min(1).max(500).optional().describe('How many entries, 1 to 500 (default 50).'),
    cursor: z.string().min(1).optional().describe('nextCursor from a previous answer, for the next (older) page.'),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ key, env, action, limit, cursor }, { scope }) {
    const query: AuditQuery = { projectId: await scope.projectId(), environment: env, action, limit, cursor };
    // By key, not by id: the entries of a flag deleted since stay in the trail, and are found by its key.
    if (key !== undefined) query.flagKey = key;
    const page = await scope.api.audit(query);
    const count = page.entries.length;
    const none =
      key === undefined ? 'No audit entries match.' : `No audit entries match for flag key "${key}" (list_flags shows the current keys).`;
    const lines = [count === 0 ? none : `${count} audit entr${count === 1 ? 'y' : 'ies'}, newest first:`];
    lines.push(...page.entries.map(auditEntryLine));
    if (page.nextCursor) lines.push(`Older entries: call again with cursor "${page.nextCursor}".`);
    return toolSuccess(lines.join('\n'), { entries: page.entries, nextCursor: page.nextCursor });
  },
});
