#!/usr/bin/env node
// Links this checkout's commands (package.json "flagopsBin") into node_modules/.bin, so that `npx flagops-mcp`
// and `npx flagops` run this checkout's build after `npm ci` (contract §1). They are not declared as "bin":
// npm 11's npx then tries to install the project into its own cache to run it, and fails.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { flagopsBin: bin } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const binDir = path.join(root, 'node_modules', '.bin');
mkdirSync(binDir, { recursive: true });
for (const [name, target] of Object.entries(bin)) {
  const source = path.join(root, target);
  if (!existsSync(source)) throw new Error(`${target} is missing: run the build first`);
  chmodSync(source, 0o755);
  const link = path.join(binDir, name);
  rmSync(link, { force: true });
  symlinkSync(path.relative(binDir, source), link);
  console.log(`linked ${name} → ${target}`);
}
