// Where the sources of each @flagops package's entry points are, for the tools that run or bundle sources
// directly (vitest, and esbuild in the builds and tests), so that they never use a stale package build.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Import specifier → absolute path of the source file it stands for. */
export const PACKAGE_SOURCES = Object.fromEntries(
  Object.entries({
    '@flagops/core': 'packages/core/src/index.ts',
    '@flagops/sdk': 'packages/sdk/src/index.ts',
    // The bundle is the SDK's index built for browsers: the same exports.
    '@flagops/sdk/browser': 'packages/sdk/src/index.ts',
    '@flagops/sdk/sse': 'packages/sdk/src/sse.ts',
    '@flagops/openfeature': 'packages/openfeature/src/server.ts',
    '@flagops/openfeature/web': 'packages/openfeature/src/web.ts',
  }).map(([specifier, file]) => [specifier, path.join(root, file)]),
);

/** For vitest's resolve.alias: each specifier matched exactly, so `@flagops/sdk` does not swallow `@flagops/sdk/sse`. */
export function sourceAliases() {
  return Object.entries(PACKAGE_SOURCES).map(([specifier, file]) => ({ find: new RegExp(`^${specifier}$`), replacement: file }));
}

/** An esbuild plugin resolving the @flagops packages to their sources, even when other packages stay external. */
export const packageSourcesPlugin = {
  name: 'flagops-package-sources',
  setup(build) {
    build.onResolve({ filter: /^@flagops\// }, (args) =>
      Object.hasOwn(PACKAGE_SOURCES, args.path) ? { path: PACKAGE_SOURCES[args.path] } : undefined,
    );
  },
};
