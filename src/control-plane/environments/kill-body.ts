import { InvalidInputError } from '../../errors/kinds.js';

/** The same limit as a kill's reason in kills.yaml (schemas/kills.schema.json). */
const MAX_REASON_LENGTH = 4096;

/**
 * The kill endpoint takes no body (service-spec §4), but accepts `{ reason }` so that an agent's reason
 * reaches the commit message and kills.yaml. Returns the reason, or undefined.
 */
export function parseKillBody(body: unknown): string | undefined {
  if (body === undefined) return undefined;
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new InvalidInputError('the body must be a JSON object or absent');
  for (const field of Object.keys(body)) {
    if (field !== 'reason') throw new InvalidInputError(`${field}: is not an allowed field`, field);
  }
  const { reason } = body as { reason?: unknown };
  if (reason === undefined) return undefined;
  if (typeof reason !== 'string' || reason.length > MAX_REASON_LENGTH) {
    throw new InvalidInputError(`reason: must be a string of at most ${MAX_REASON_LENGTH} characters`, 'reason');
  }
  return reason.trim() === '' ? undefined : reason;
}
