import { describe, expect, it } from 'vitest';
import { parseSettings } from '../../src/apps/mcp/settings.js';

describe('the MCP server’s settings', () => {
  it('refuses a FLAGOPS_URL with credentials without showing them', () => {
    let message = '';
    try {
      parseSettings([], {
        FLAGOPS_URL: 'http://u:hunter2-pass@127.0.0.1:4000',
        FLAGOPS_AGENT_KEY: 'svc_agt_0123456789abcdef0123456789abcdef',
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('FLAGOPS_URL must not carry a query, fragment or credentials');
    expect(message).not.toContain('hunter2-pass');
  });
});
