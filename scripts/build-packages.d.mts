/** Types of scripts/build-packages.mjs for the tests and benchmarks that build the browser bundle themselves. */
export function buildPackage(name: 'core' | 'sdk' | 'openfeature'): Promise<string>;
export function buildSdkBundle(options?: { outfile?: string; minify?: boolean }): Promise<{ outfile: string; bytes: number }>;
