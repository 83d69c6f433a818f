/** Types of scripts/package-sources.mjs for the tests that bundle the sources themselves. */
import type { Plugin } from 'esbuild';

export const PACKAGE_SOURCES: Readonly<Record<string, string>>;
export function sourceAliases(): { find: RegExp; replacement: string }[];
export const packageSourcesPlugin: Plugin;
