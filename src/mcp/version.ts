import { readFileSync } from 'node:fs';

/**
 * The package version, read from package.json beside dist/ (src/mcp and dist/mcp are both two levels down).
 * Read at run time because package.json lies outside the compiled tree; a bundled copy elsewhere says so.
 */
function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name?: string; version?: string };
    return pkg.name === 'flagops' && pkg.version ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const MCP_SERVER_VERSION = readVersion();
