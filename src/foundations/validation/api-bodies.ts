import type { Rule } from './api-types.generated.js';

/**
 * The request bodies the schemas in schemas/api/ accept, typed for the control plane: generated from the schemas
 * (scripts/generate-api-types.mjs), so a body type never differs from what validation lets through.
 */
export type {
  ApiBodies,
  ChangePreviewBody,
  ConfigUpdateBody,
  FlagCreateBody,
  FlagPatchBody,
  KeyCreateBody,
  KillBody,
  ProjectCreateBody,
  ProjectPatchBody,
  PromoteBody,
  ProposalRejectBody,
  RolloutPlanBody,
  SegmentPutBody,
  TriggerCreateBody,
} from './api-types.generated.js';

/** A rule as sent by a client: without `id`, the server assigns one; `conditions` absent means none. */
export type RuleInput = Rule;

/**
 * A config update that does nothing but clear a kill (`clearKill: true`, with `expectedVersion` or not): a kill's
 * undoing, which goes the kill's way (no approval, no budget, no turn among control planes).
 */
export function onlyClearsKill(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  const fields = Object.keys(body).filter((field) => field !== 'expectedVersion');
  return fields.length === 1 && (body as { clearKill?: unknown }).clearKill === true;
}
