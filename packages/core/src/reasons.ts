import type { EvaluationResult, Reason } from './model.js';

/**
 * flagops reasons in OpenFeature's vocabulary (openfeature.dev/specification/types#resolution-reason), shared
 * by the OpenFeature providers and the OFREP endpoints so both say the same thing.
 */
const OPENFEATURE_REASON: Readonly<Record<Reason, string>> = {
  killed: 'DISABLED',
  flag_disabled: 'DISABLED',
  // valueOff because another flag is off for this context: the flag is, for it, disabled.
  prerequisite_failed: 'DISABLED',
  rule_match: 'TARGETING_MATCH',
  rollout: 'SPLIT',
  default: 'DEFAULT',
  archived: 'DEFAULT',
  flag_not_found: 'ERROR',
  error: 'ERROR',
};

export function openFeatureReason(reason: Reason): string {
  return OPENFEATURE_REASON[reason] ?? 'UNKNOWN';
}

export type FlagMetadata = Record<string, string | number | boolean>;

/**
 * What OpenFeature's flag metadata carries beyond the reason: flagops' own reason (two of them map to
 * DISABLED and two to DEFAULT), the rule, the bucket, and the kill, so a hook or a log line can tell them apart.
 */
export function flagMetadata(
  result: Pick<EvaluationResult, 'reason' | 'ruleId' | 'bucket' | 'variantBucket' | 'prerequisiteKey'>,
): FlagMetadata {
  const metadata: FlagMetadata = { flagopsReason: result.reason };
  if (result.ruleId !== undefined) metadata.ruleId = result.ruleId;
  if (result.bucket !== undefined) metadata.bucket = result.bucket;
  if (result.variantBucket !== undefined) metadata.variantBucket = result.variantBucket;
  if (result.prerequisiteKey !== undefined) metadata.prerequisiteKey = result.prerequisiteKey;
  if (result.reason === 'killed') metadata.killed = true;
  if (result.reason === 'archived') metadata.archived = true;
  return metadata;
}
