#!/usr/bin/env node
// Makes the files package.json's `bin` names executable. tsc writes new files 0644, and npx links a checkout's
// bins once per path: after a clean build (or a fresh clone at the same path) `npx flagops` would find the link
// and a file it may not run ("Permission denied").
import { chmod, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { bin } = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
for (const file of Object.values(bin)) await chmod(path.join(root, file), 0o755);
