import net from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMiddleware } from '../../src/foundations/http/error-middleware.js';
import { readJsonBody } from '../../src/foundations/http/read-json-body.js';
import { listen } from '../../src/foundations/http/serve.js';
import { createLogger } from '../../src/foundations/log/logger.js';
import { instrumentApp } from '../../src/foundations/metrics/metrics-http.js';
import { ServerMetrics } from '../../src/foundations/metrics/server-metrics.js';
import { until } from '../helpers/deadlines.js';
import { httpClient } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { sample } from '../metrics/prometheus-text.js';

/**
 * Sends a request announcing a 100-byte body with only its first bytes, as a client that gives up (or dies)
 * mid-upload; `closeAfterMs` later, or once the server closes it, the connection is gone. Resolves with what the
 * server sent on it.
 */
function partialRequest(url: string, path: string, key: string, closeAfterMs: number | null): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let received = '';
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":',
      );
      if (closeAfterMs !== null) setTimeout(() => socket.destroy(), closeAfterMs);
    });
    socket.on('data', (chunk) => {
      received += String(chunk);
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(received));
  });
}

const DURATION_COUNT = 'flagops_http_request_duration_seconds_count';

describe('a request whose client closes the connection before sending its whole body', () => {
  let svc: TestService;
  let sdkKey: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    svc = await startTestService({ logger: createLogger({ level: 'debug', write: (line) => logLines.push(line) }) });
    const admin = httpClient(svc.controlUrl, svc.admin);
    const project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
  });
  afterAll(() => svc?.stop());

  const metrics = async (url: string) => (await fetch(`${url}/metrics`)).text();

  it.each([
    ['evaluation', '/v1/evaluate', () => svc.evalUrl, () => sdkKey],
    ['control', '/api/v1/projects', () => svc.controlUrl, () => svc.admin],
  ])('is counted on the %s port as 499 (client closed request), not 500, and logged at debug only', async (server, route, url, key) => {
    const cutOff = { server, route, status: '499' };
    for (let i = 0; i < 3; i++) await partialRequest(url(), route, key(), 50);
    const text = await until(
      () => metrics(url()),
      (t) => sample(t, DURATION_COUNT, cutOff) === 3,
    );
    expect(sample(text, DURATION_COUNT, { server, route, status: '500' })).toBeUndefined();
    const lines = logLines.map((line) => JSON.parse(line));
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
    const logged = lines.filter((l) => l.path === route && l.status === 499);
    expect(logged).toHaveLength(3);
    for (const line of logged) {
      expect(line).toMatchObject({ level: 'debug', method: 'POST' });
      expect(JSON.stringify(line)).not.toContain('stack');
    }
  });
});

describe('a request whose body does not arrive within the request timeout', () => {
  it('is answered 408 and counted as 408, not 500, with no error logged', async () => {
    const logLines: string[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => logLines.push(line) });
    const app = new Koa();
    const router = new Router();
    router.post('/api/v1/things', async (ctx) => {
      ctx.body = { got: await readJsonBody(ctx.req) };
    });
    app.use(errorMiddleware(logger));
    app.use(router.routes());
    const metrics = new ServerMetrics('control');
    instrumentApp(app, metrics);
    const server = await listen(app, '127.0.0.1', 0);
    try {
      // The service's are 10 s for the headers and 5 minutes for the whole request: shortened here to be reached.
      server.server.requestTimeout = 1_500;
      server.server.headersTimeout = 1_000;
      const answer = await partialRequest(server.url, '/api/v1/things', 'x', null);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      const text = await until(
        () => metrics.text(),
        (t) => sample(t, DURATION_COUNT, { route: '/api/v1/things', status: '408' }) === 1,
      );
      expect(sample(text, DURATION_COUNT, { route: '/api/v1/things', status: '500' })).toBeUndefined();
      expect(logLines.map((line) => JSON.parse(line).level)).not.toContain('error');
    } finally {
      await server.close();
    }
  });
});
