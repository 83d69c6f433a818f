import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Set in the environment of pushes that come through the service; the hook checks only those (docs/deployment.md). */
export const PUSH_CHECK_ENV = 'FLAGOPS_PUSH_CHECK';

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * How the hook runs `flagops validate-push`, by absolute paths so it works whatever PATH git gives hooks:
 * this node binary and the CLI entry next to this module — dist/cli/main.js when built, or src/cli/main.ts
 * through vite-node when the service runs from source (the test suite).
 */
export function validatorCommand(): string[] {
  const here = fileURLToPath(import.meta.url);
  const cliDir = path.join(path.dirname(here), '..', 'cli');
  if (here.endsWith('.js')) return [process.execPath, path.join(cliDir, 'main.js'), 'validate-push'];
  const root = path.resolve(path.dirname(here), '..', '..');
  const viteNode = path.join(root, 'node_modules', 'vite-node', 'vite-node.mjs');
  if (!existsSync(viteNode)) throw new Error('running from source needs vite-node to run the push validator; build with npm run build');
  return [process.execPath, viteNode, path.join(cliDir, 'main.ts'), 'validate-push'];
}

export function hookScript(command: readonly string[] = validatorCommand()): string {
  return `#!/bin/sh
# Installed by flagops: refuses pushes through the service that would put an invalid file on main.
# Pushes made on this machine straight into the repository are not checked here: what they put on main is
# reported and never served (contract §2).
[ "$${PUSH_CHECK_ENV}" = "1" ] || exit 0
exec ${command.map(quote).join(' ')}
`;
}

/** Writes hooks/pre-receive unless it already has this content; atomic, so a push never runs half a script. */
export async function installPreReceiveHook(gitdir: string, script = hookScript()): Promise<void> {
  const file = path.join(gitdir, 'hooks', 'pre-receive');
  const current = await readFile(file, 'utf8').catch(() => null);
  if (current === script) return;
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, script, { mode: 0o755 });
  await chmod(tmp, 0o755);
  await rename(tmp, file);
}
