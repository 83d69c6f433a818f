import type { ErrorCode, ResolutionDetails } from '@openfeature/core';
import type { EvaluationDetails } from '../sdk/index.js';
import { flagMetadata, openFeatureReason } from './reasons.js';

/**
 * An SDK result as OpenFeature resolution details. Errors keep the caller's default and carry OpenFeature's
 * own error code (the SDK already uses its names); the SDK client then reports reason ERROR.
 */
export function toResolution<T>(details: EvaluationDetails<T>): ResolutionDetails<T> {
  if (details.reason === 'error') {
    return { value: details.value, reason: 'ERROR', errorCode: (details.errorCode ?? 'GENERAL') as ErrorCode, errorMessage: details.errorMessage };
  }
  const resolution: ResolutionDetails<T> = { value: details.value, reason: openFeatureReason(details.reason), flagMetadata: flagMetadata(details) };
  if (details.variation !== undefined) resolution.variant = details.variation;
  return resolution;
}
