import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundledServer, bundleServer, ROOT } from './harness/bundle-server.js';

let server: BundledServer;
beforeAll(async () => {
  server = await bundleServer();
});
afterAll(async () => {
  await server?.remove();
});

const SHARED = new Set([
  'src/foundations/log/logger.ts',
  'src/foundations/http/read-json-body.ts',
  'src/foundations/http/client-errors.ts', // node:http only: what the HTTP parser refuses, answered with the JSON error body
  'src/foundations/http/connection-limits.ts', // node:http and the logger's type: the timeouts every server of flagops has
  'src/foundations/auth/key-format.ts', // node:crypto only: reading an Authorization header as every port does
  'src/foundations/errors/flagops-error.ts',
  'src/foundations/errors/http-status.ts',
  'src/foundations/errors/kinds.ts',
  'src/features/proposals/impact.ts', // pure, imports only @flagops/core: the tools describe an impact as the dashboard does
  'src/features/budgets/budget-rules.ts', // pure, imports only @flagops/core and impact.ts's types: a budget's use in words
  'src/foundations/validation/one-line.ts', // pure, imports nothing: free text shown on one line, as `flagops diff` shows it
]);
/** The request body types generated from schemas/api/: the one thing of the server's tree it takes as types only. */
const WIRE_TYPES = 'src/foundations/validation/api-types.generated.ts';

/** Every relative import and re-export of src/apps/mcp's files that leaves src/apps/mcp: file, target, and whether types only. */
function importsLeavingMcp(): Array<{ file: string; target: string; typeOnly: boolean }> {
  const found: Array<{ file: string; target: string; typeOnly: boolean }> = [];
  const files = readdirSync(path.join(ROOT, 'src/apps/mcp'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  for (const relative of files) {
    const file = `src/apps/mcp/${relative.split(path.sep).join('/')}`;
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    for (const [, type, specifier] of text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+'(\.[^']+)';/gm)) {
      const target = path.posix.join(path.posix.dirname(file), specifier).replace(/\.js$/, '.ts');
      if (!target.startsWith('src/apps/mcp/')) found.push({ file, target, typeOnly: type !== undefined });
    }
  }
  return found;
}

// docs/architecture.md: "mcp/ — a client of the control-plane HTTP API, nothing more".
describe('what flagops-mcp is built from', () => {
  it('only its own code, the logger, the HTTP body reader and parser refusals with their typed errors, the impact’s and budgets’ words and @flagops/core: never storage or the control plane', () => {
    const ours = server.inputs.filter((input) => input.startsWith('src/') || input.startsWith('packages/'));
    expect(ours).toContain('src/apps/mcp/main.ts');
    expect(ours).toContain('packages/core/src/explain.ts');
    const outside = ours.filter((input) => !/^src\/apps\/mcp\/|^packages\/core\/src\//.test(input) && !SHARED.has(input));
    expect(outside).toEqual([]);
  });

  it("takes from the server's tree, beside those, only the request body types generated from the schemas, as types", () => {
    const imports = importsLeavingMcp();
    expect(imports.map(({ target }) => target)).toContain(WIRE_TYPES);
    const others = imports.filter(({ target, typeOnly }) => !SHARED.has(target) && !(target === WIRE_TYPES && typeOnly));
    expect(others).toEqual([]);
  });
});
