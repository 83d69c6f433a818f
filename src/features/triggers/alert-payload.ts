/**
 * What a trigger call's JSON body says. Any JSON body fires the trigger; these fields refine it:
 * - `reason`: the kill's reason (a generic monitoring tool sets it);
 * - Prometheus Alertmanager's webhook payload: `status` ("firing" or "resolved") and
 *   `commonAnnotations.summary`, the summary annotation all its alerts share.
 */
export interface AlertPayload {
  /** A resolved alert: nothing to do (a kill is sticky until a person clears it). */
  resolved: boolean;
  /** The kill's reason, when the body carries one. */
  reason?: string;
}

/** A kill's reason as kills.yaml keeps it (and the kill API takes it): a longer one is cut, never refused. */
const MAX_REASON_LENGTH = 4096;

/**
 * A monitoring tool's text, cut to what a kill keeps and marked so where cut: a trigger never refuses to kill
 * for a long description, as the kill API refuses a reason over the limit.
 */
function text(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  return [...trimmed].length <= MAX_REASON_LENGTH ? trimmed : `${[...trimmed].slice(0, MAX_REASON_LENGTH - 1).join('')}…`;
}

export function readAlertPayload(body: unknown): AlertPayload {
  const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const annotations = fields.commonAnnotations;
  const summary =
    annotations !== null && typeof annotations === 'object' ? text((annotations as Record<string, unknown>).summary) : undefined;
  const reason = text(fields.reason) ?? summary;
  return reason === undefined ? { resolved: fields.status === 'resolved' } : { resolved: fields.status === 'resolved', reason };
}
