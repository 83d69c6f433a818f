import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const bins = Object.entries(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).bin as Record<string, string>);

describe('the package bins after npm run build', () => {
  // npx links a checkout's bins once per path; a file tsc wrote 0644 after that is "Permission denied".
  it.each(bins)('%s (%s) is executable by its owner, group and others', async (_name, file) => {
    expect((await stat(path.join(root, file))).mode & 0o111).toBe(0o111);
  });
});
