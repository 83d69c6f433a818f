// The tests' cluster harness (test/cluster/cluster.ts: PostgreSQL, a git host, control planes and replicas as
// processes), bundled for scripts that run the built service, so benchmarks and the fault run start clusters
// exactly as the tests do. The bundle goes under test-artifacts/, where its packages resolve from node_modules.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { packageSourcesPlugin } from '../../package-sources.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Built entries of the service and the CLI, as `startCluster({ entries })` takes them. */
export const DIST_ENTRIES = { service: path.join(root, 'dist', 'main.js'), cli: path.join(root, 'dist', 'apps', 'cli', 'main.js') };

/** `{ startCluster, PostgresCluster, POSTGRES_MISSING, startGitServer }`, from the tests' sources. */
export async function loadClusterHarness() {
  const outfile = path.join(root, 'test-artifacts', `cluster-harness-${process.pid}.mjs`);
  await build({
    stdin: {
      contents: [
        "export { startCluster } from './test/cluster/cluster.ts';",
        "export { PostgresCluster, POSTGRES_MISSING } from './test/helpers/postgres.ts';",
        "export { startGitServer } from './test/remote/git-server.ts';",
      ].join('\n'),
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    plugins: [packageSourcesPlugin],
    outfile,
    logLevel: 'silent',
  });
  try {
    return await import(pathToFileURL(outfile).href);
  } finally {
    await rm(outfile, { force: true });
  }
}
