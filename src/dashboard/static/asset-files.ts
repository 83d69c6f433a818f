import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where scripts/build-dashboard.mjs writes the page; the same two levels up from src/ and dist/. */
export const DEFAULT_ASSETS_DIR = fileURLToPath(new URL('../../../dist/dashboard-web/', import.meta.url));

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The built page, read once into memory (a few tens of KiB). Only files present in the directory when it
 * was read can be served, so no request path ever reaches the file system.
 */
export class AssetFiles {
  private loaded: Promise<Map<string, Asset>> | undefined;

  constructor(private readonly dir: string = DEFAULT_ASSETS_DIR) {}

  /** The asset, or null; null for every name while the page is not built. */
  async get(name: string): Promise<Asset | null> {
    this.loaded ??= this.load().catch((err) => {
      this.loaded = undefined; // not built yet: look again on the next request
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map<string, Asset>();
      throw err;
    });
    return (await this.loaded).get(name) ?? null;
  }

  get directory(): string {
    return this.dir;
  }

  private async load(): Promise<Map<string, Asset>> {
    const assets = new Map<string, Asset>();
    for (const entry of await readdir(this.dir, { withFileTypes: true })) {
      const type = TYPES[path.extname(entry.name)];
      if (!entry.isFile() || type === undefined) continue;
      const body = await readFile(path.join(this.dir, entry.name));
      assets.set(entry.name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
    }
    if (!assets.has('index.html')) {
      throw Object.assign(new Error(`${this.dir} has no index.html`), { code: 'ENOENT' });
    }
    return assets;
  }
}
