import type { EnvironmentName } from '@flagops/core';
import { type HttpClient, httpClient } from '../../helpers/http-client.js';
import { startTestService, type TestService } from '../../helpers/start-test-service.js';

export const PROJECT = 'shop';

export interface McpService {
  svc: TestService;
  /** The control plane as the admin key (to arrange things and to check what the agent did). */
  admin: HttpClient;
  projectId: string;
  /** Creates a flag through the API, optionally with a config in some environments. */
  flag(key: string, configs?: Partial<Record<EnvironmentName, Record<string, unknown>>>): Promise<{ id: string }>;
  /** A new SDK key of the project for one environment. */
  sdkKey(environment: EnvironmentName): Promise<string>;
  /** POST /v1/evaluate with an SDK key: what an application gets. */
  evaluate(sdkKey: string, key: string, context?: unknown): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

async function ok<T>(promise: Promise<{ status: number; body: T }>, what: string): Promise<T> {
  const res = await promise;
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The whole flagops service on free loopback ports with project "shop", set up through the HTTP API. */
export async function startMcpService(): Promise<McpService> {
  const svc = await startTestService();
  const admin = httpClient(svc.controlUrl, svc.admin);
  const project = await ok(admin.post('/api/v1/projects', { name: 'Shop', slug: PROJECT }), 'create project');
  return {
    svc,
    admin,
    projectId: project.id,
    async flag(key, configs = {}) {
      const flag = await ok(admin.post(`/api/v1/projects/${project.id}/flags`, { key }), `create flag ${key}`);
      for (const [env, config] of Object.entries(configs)) {
        await ok(admin.put(`/api/v1/flags/${flag.id}/environments/${env}/config`, config), `configure ${key} in ${env}`);
      }
      return flag;
    },
    async sdkKey(environment) {
      const created = await ok(admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment }), 'create sdk key');
      return created.key;
    },
    async evaluate(sdkKey, key, context = {}) {
      const body = await ok(httpClient(svc.evalUrl, sdkKey).post('/v1/evaluate', { key, context }), `evaluate ${key}`);
      return body[key];
    },
    stop: () => svc.stop(),
  };
}
