/** Types of scripts/vectors/evaluation.mjs, for the test that checks test/vectors/evaluation.json against it. */
export function referenceBucket(flagKey: string, userId: string): number;
export const vectors: { about: string; cases: Array<{ name: string } & Record<string, unknown>> };
