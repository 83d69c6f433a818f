import { type EvaluationResult, flagMetadata, type JsonValue, openFeatureReason } from '@flagops/core';

export interface OfrepSuccess {
  key: string;
  value?: JsonValue;
  reason: string;
  variant?: string;
  metadata: Record<string, string | number | boolean>;
}

/**
 * One successful evaluation in OFREP's shape. A null value (an archived flag without a defaultValue) is left
 * out: OFREP has no null type, and an absent value tells the provider to use the code default (OFREP ADR-0006).
 */
export function ofrepSuccess(key: string, result: EvaluationResult): OfrepSuccess {
  const out: OfrepSuccess = { key, reason: openFeatureReason(result.reason), metadata: flagMetadata(result) };
  if (result.value !== null) out.value = result.value;
  if (result.variation !== undefined) out.variant = result.variation;
  return out;
}
