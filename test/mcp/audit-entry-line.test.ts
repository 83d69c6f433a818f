import type { AuditEntry } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { auditEntryLine } from '../../src/apps/mcp/tools/audit-tool.js';

const pushedEntry = {
  id: '0123456789abcdef0123456789abcdef01234567',
  at: '2026-11-23T09:00:00.000Z',
  action: 'config_update',
  flagKey: 'checkout-v2',
  environment: 'prod',
  actor: { type: 'engineer', name: 'Mallory <mallory@example.com>' },
  pushedBy: { type: 'agent', keyPrefix: 'svc_agt_pushpush', name: 'ci-bot' },
} as unknown as AuditEntry;

describe('get_audit_log lines', () => {
  it('name the key that pushed a commit beside the author the commit claims', () => {
    expect(auditEntryLine(pushedEntry)).toBe(
      '2026-11-23T09:00:00.000Z config_update checkout-v2 in prod by engineer Mallory <mallory@example.com>, pushed by agent svc_agt_pushpush (ci-bot) [commit 0123456789ab]',
    );
  });

  it('say nothing of a pusher for the service’s own commits', () => {
    const { pushedBy: _, ...own } = pushedEntry as AuditEntry & { pushedBy?: unknown };
    expect(auditEntryLine(own as AuditEntry)).not.toContain('pushed by');
  });
});
