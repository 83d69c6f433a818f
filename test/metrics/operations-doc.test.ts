import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ServerMetrics } from '../../src/foundations/metrics/server-metrics.js';
import { registerReplicaFamilies } from '../../src/foundations/metrics/service-families.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { ROOT } from '../packages/packed-app.js';

/** docs/operations.md names only families the servers expose, and its configuration files are valid YAML. */
const DOC = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');

function yamlBlocks(): unknown[] {
  return [...DOC.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parse(m[1]));
}

describe('docs/operations.md', () => {
  let svc: TestService;
  let exposed: Set<string>;

  beforeAll(async () => {
    svc = await startTestService();
    const replica = new ServerMetrics('replica');
    registerReplicaFamilies(replica.registry, {
      connected: true,
      lastContactAt: Date.now(),
      following: 'http://127.0.0.1:4000',
      failovers: { 'connection-lost': 1 },
    });
    const texts = [
      ...(await Promise.all([svc.controlUrl, svc.evalUrl].map(async (url) => (await fetch(`${url}/metrics`)).text()))),
      await replica.text(),
    ];
    exposed = new Set(texts.flatMap((t) => [...t.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1])));
  });
  afterAll(() => svc?.stop());

  it('names only families the servers expose', () => {
    const named = new Set([...DOC.matchAll(/\b(flagops_[a-z_]+?)(?:_bucket|_count|_sum)?\b/g)].map((m) => m[1]));
    const missing = [...named].filter((name) => !exposed.has(name));
    expect(missing).toEqual([]);
    expect(named.size).toBeGreaterThanOrEqual(10);
  });

  it('gives a scrape configuration and a rules file that are valid YAML, each rule with an alert, an expression and a summary', () => {
    const [scrape, rules] = yamlBlocks() as [
      { scrape_configs: Array<{ job_name: string; static_configs: unknown[] }> },
      { groups: Array<{ rules: Array<{ alert: string; expr: string; annotations: { summary: string } }> }> },
    ];
    expect(scrape.scrape_configs.map((c) => c.job_name)).toEqual(['flagops-control', 'flagops-evaluation', 'flagops-replica']);
    const alerts = rules.groups.flatMap((g) => g.rules);
    for (const rule of alerts) {
      expect(rule.alert).toMatch(/^Flagops/);
      expect(rule.expr).toMatch(/flagops_/);
      expect(rule.annotations.summary).toBeTruthy();
    }
    const covered = alerts.map((r) => r.expr).join('\n');
    for (const family of [
      'flagops_invalid_files',
      'flagops_replica_last_contact_timestamp_seconds',
      'flagops_stream_clients',
      'flagops_kill_propagation_seconds',
      'flagops_auth_failures_total',
      'flagops_webhook_deliveries_dropped_total',
    ])
      expect(covered).toContain(family);
  });
});
