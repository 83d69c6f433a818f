import { type EvaluationCounter, statsScope } from './evaluation-counter.js';
import { exposureTotals } from './event-counts.js';
import { sampleRatio } from './sample-ratio.js';

/** What the check reads of a served environment: its flags with their variants. */
export interface CheckedView {
  org: string;
  projectId: string;
  projectSlug: string;
  environment: string;
  flags: Readonly<Record<string, { variants?: ReadonlyArray<{ name: string; weight: number }> }>>;
}

export interface SampleRatioVerdict {
  org: string;
  project: string;
  environment: string;
  flag: string;
  mismatch: boolean;
}

/**
 * The sample-ratio check of every served flag with weighted variants over the last 24 hours, for
 * `flagops_sample_ratio_mismatch` (read at each scrape). Flags without two weighted variants have no check and
 * no series, so the metric's cardinality is that of the A/B tests configured.
 */
export function* sampleRatioVerdicts(
  views: Iterable<CheckedView>,
  counter: Pick<EvaluationCounter, 'series'>,
): Generator<SampleRatioVerdict> {
  for (const view of views) {
    const scope = statsScope(view.org, view.projectId, view.environment);
    for (const [flag, entry] of Object.entries(view.flags)) {
      if ((entry.variants?.length ?? 0) < 2) continue;
      const check = sampleRatio(entry.variants, exposureTotals(counter, scope, flag, '24h'));
      if (check) yield { org: view.org, project: view.projectSlug, environment: view.environment, flag, mismatch: check.mismatch };
    }
  }
}
