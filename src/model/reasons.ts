/** Every reason an evaluation result can carry (contract §4, plus `error` for SDK-side failures). */
export const REASONS = ['killed', 'archived', 'flag_disabled', 'rule_match', 'rollout', 'default', 'flag_not_found', 'error'] as const;
export type Reason = (typeof REASONS)[number];

export type Variation = 'on' | 'off' | 'default';
