import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundledServer, bundleServer } from './harness/bundle-server.js';

let server: BundledServer;
beforeAll(async () => {
  server = await bundleServer();
});
afterAll(async () => {
  await server?.remove();
});

// docs/architecture.md: "mcp/ — a client of the control-plane HTTP API, nothing more".
describe('what flagops-mcp is built from', () => {
  it('only its own code, the logger, the HTTP body reader with its typed errors, the impact’s words and @flagops/core: never storage or the control plane', () => {
    const ours = server.inputs.filter((input) => input.startsWith('src/') || input.startsWith('packages/'));
    expect(ours).toContain('src/mcp/main.ts');
    expect(ours).toContain('packages/core/src/explain.ts');
    const shared = new Set([
      'src/log/logger.ts',
      'src/http/read-json-body.ts',
      'src/errors/flagops-error.ts',
      'src/errors/http-status.ts',
      'src/errors/kinds.ts',
      'src/proposals/impact.ts', // pure, imports only @flagops/core: the tools describe an impact as the dashboard does
    ]);
    const outside = ours.filter((input) => !/^src\/mcp\/|^packages\/core\/src\//.test(input) && !shared.has(input));
    expect(outside).toEqual([]);
  });
});
