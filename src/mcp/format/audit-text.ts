import type { AuditEntry } from '@flagops/core';

/** "agent svc_agt_3kq9x2ab (deploy-bot)": the key prefix is what identifies a key action (service-spec §1). */
function actorText(actor: AuditEntry['actor']): string {
  const parts: string[] = [actor.type];
  if (actor.keyPrefix) parts.push(actor.keyPrefix);
  if (actor.name && actor.name !== actor.keyPrefix) parts.push(actor.keyPrefix ? `(${actor.name})` : actor.name);
  return parts.join(' ');
}

/** One audit entry in one line: when, what, where, who, why, and the commit to look it up in git. */
export function auditEntryLine(entry: AuditEntry): string {
  const what: string[] = [entry.action];
  if (entry.flagKey) what.push(entry.flagKey);
  else if (entry.projectSlug) what.push(`project ${entry.projectSlug}`);
  if (entry.fromEnvironment && entry.environment) what.push(`${entry.fromEnvironment} → ${entry.environment}`);
  else if (entry.environment) what.push(`in ${entry.environment}`);
  const reason = entry.reason ? ` — reason: ${entry.reason}` : '';
  return `${entry.at} ${what.join(' ')} by ${actorText(entry.actor)}${reason} [commit ${entry.id.slice(0, 12)}]`;
}
