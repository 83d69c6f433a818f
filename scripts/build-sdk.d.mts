/** Types of scripts/build-sdk.mjs for the tests that build the browser bundle themselves. */
export function buildSdkBundle(options?: { outfile?: string; minify?: boolean }): Promise<{ outfile: string; bytes: number }>;
