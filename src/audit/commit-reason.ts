import type { CommitInfo } from '../storage/index.js';

const REASON_LINE = /^reason:[ \t]*/i;

/**
 * The reason a commit gives for itself: a paragraph of the body that starts with `reason:` (how the kill
 * switch writes it, docs/architecture.md), or a `reason:` trailer. An engineer who writes only
 * `kill x\n\nreason: broken` gets a last paragraph that git reads as a trailer, hence the second place.
 */
export function commitReason(commit: Pick<CommitInfo, 'body' | 'trailers'>): string | undefined {
  for (const paragraph of commit.body.split(/\n[ \t]*\n/)) {
    if (REASON_LINE.test(paragraph)) {
      const text = paragraph.replace(REASON_LINE, '').trim();
      if (text !== '') return text;
    }
  }
  for (let i = commit.trailers.length - 1; i >= 0; i--) {
    const trailer = commit.trailers[i];
    if (trailer.key.toLowerCase() === 'reason' && trailer.value !== '') return trailer.value;
  }
  return undefined;
}
