import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { commitCount, createFlag, createProject } from './fixtures.js';

describe('errors ({ error: { code, message } })', () => {
  let svc: TestService;
  let api: HttpClient;
  let flag: Json;
  let configPath: string;
  beforeAll(async () => {
    svc = await startTestService();
    api = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(api, 'shop');
    flag = await createFlag(api, project.id, { key: 'checkout' });
    configPath = `/api/v1/flags/${flag.id}/environments/prod/config`;
  });
  afterAll(() => svc.stop());

  const expectError = (res: { status: number; body: Json }, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error: { code, message: expect.any(String) } });
  };

  it('malformed JSON is 400 invalid_input', async () => {
    expectError(
      await api.request('PUT', configPath, { rawBody: '{"enabled": tru', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_input',
    );
  });

  it('a body that is not UTF-8 is 400 invalid_input, and nothing of it is kept', async () => {
    const body = Buffer.concat([Buffer.from('{"name":"Check'), Buffer.from([0xff, 0xfe]), Buffer.from('out"}')]);
    const res = await fetch(`${svc.controlUrl}/api/v1/flags/${flag.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${svc.admin}`, 'content-type': 'application/json' },
      body,
    });
    expectError({ status: res.status, body: (await res.json()) as Json }, 400, 'invalid_input');
    expect((await api.get(`/api/v1/flags/${flag.id}`)).body.name).not.toContain('\uFFFD');
  });

  it('a body that is not a JSON object is 400 invalid_input', async () => {
    for (const raw of ['[]', '"enabled"', 'null', '3']) {
      expectError(
        await api.request('PUT', configPath, { rawBody: raw, headers: { 'content-type': 'application/json' } }),
        400,
        'invalid_input',
      );
    }
  });

  it('a body that is not application/json is 415 unsupported_media_type', async () => {
    expectError(
      await api.request('PUT', configPath, { rawBody: 'enabled=true', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported_media_type',
    );
    expectError(
      await api.request('POST', '/api/v1/projects', { rawBody: '{"name":"x","slug":"x"}', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
  });

  it('a compressed body (Content-Encoding) is 415 unsupported_media_type, whatever its bytes, and changes nothing', async () => {
    const before = (await api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod;
    for (const coding of ['gzip', 'br', 'deflate']) {
      // Labelled compressed, sent plain: taken as sent, it would be committed as what it says it is not.
      const res = await api.request('PUT', configPath, {
        rawBody: '{"rolloutPct":8}',
        headers: { 'content-type': 'application/json', 'content-encoding': coding },
      });
      expectError(res, 415, 'unsupported_media_type');
      expect(res.body.error.message).toContain(`Content-Encoding "${coding}"`);
    }
    // Really compressed, on the evaluation port: said so, not "not valid UTF-8".
    const sdk = (await api.post('/api/v1/keys', { kind: 'sdk', projectId: flag.projectId, environment: 'prod' })).body.key;
    const gzipped = await fetch(`${svc.evalUrl}/v1/evaluate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sdk}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync('{"key":"checkout"}'),
    });
    expect(gzipped.status).toBe(415);
    expect(((await gzipped.json()) as Json).error.code).toBe('unsupported_media_type');
    expect((await api.get(`/api/v1/flags/${flag.id}`)).body.environments.prod).toEqual(before);
  });

  it('a body over 1 MiB is 413 payload_too_large', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024), slug: 'big' });
    expectError(
      await api.request('POST', '/api/v1/projects', { rawBody: big, headers: { 'content-type': 'application/json' } }),
      413,
      'payload_too_large',
    );
  });

  it('a missing body where one is required is 400', async () => {
    expectError(await api.request('POST', '/api/v1/projects'), 400, 'invalid_input');
    expectError(await api.request('POST', `/api/v1/flags/${flag.id}/environments/prod/promote`), 400, 'invalid_input');
  });

  it('an unknown route or method is 404 not_found', async () => {
    expectError(await api.get('/api/v1/nothing-here'), 404, 'not_found');
    expectError(await api.get('/api/v2/projects'), 404, 'not_found');
    expectError(await api.request('PUT', '/api/v1/projects'), 404, 'not_found');
    expectError(await api.get(`/api/v1/flags/${flag.id}/environments/prod`), 404, 'not_found');
  });

  it("a request for the other port's API is 404 naming the port that serves it", async () => {
    const onControl = await httpClient(svc.controlUrl, 'svc_sdk_x').post('/v1/evaluate', { key: 'checkout', context: {} });
    expectError(onControl, 404, 'not_found');
    expect(onControl.body.error.message).toMatch(/evaluation API is served on the evaluation port \(FLAGOPS_EVAL_PORT/);
    const onEval = await httpClient(svc.evalUrl, svc.admin).get('/api/v1/projects');
    expectError(onEval, 404, 'not_found');
    expect(onEval.body.error.message).toMatch(/control plane's API is served on its control port \(FLAGOPS_CONTROL_PORT/);
    expect((await api.get('/api/v1/nothing-here')).body.error.message).toBe('no route for GET /api/v1/nothing-here');
  });

  it('a path segment that is not valid percent-encoding is 400 invalid_input naming it, whatever the route', async () => {
    for (const [method, path, segment] of [
      ['PUT', '/api/v1/flags/%ff/environments/prod/config', '%ff'],
      ['GET', '/api/v1/flags/%ff/environments/prod/config', '%ff'],
      ['PUT', '/api/v1/flags/%E0%A4%A/environments/prod/config', '%E0%A4%A'],
      ['GET', `/api/v1/flags/${flag.id}/environments/pr%ffod/stats`, 'pr%ffod'],
      ['GET', '/api/v1/projects/%', '%'],
    ]) {
      const res = await api.request(method, path, method === 'PUT' ? { body: { enabled: true } } : {});
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.message).toBe(`the path segment "${segment}" is not valid percent-encoding`);
    }
    // A segment that decodes is still the flag it names: %66 is "f".
    expect((await api.get(`/api/v1/flags/${flag.id.replace('f', '%66')}`)).status).toBe(200);
  });

  it('an unknown environment is 404 not_found, named in the message', async () => {
    const res = await api.put(`/api/v1/flags/${flag.id}/environments/Prod/config`, { enabled: true });
    expectError(res, 404, 'not_found');
    expect(res.body.error.message).toContain('Prod');
  });

  it('an Authorization header that is not a bearer key is 401', async () => {
    expectError(await api.request('GET', '/api/v1/projects', { headers: { authorization: 'Basic dXNlcjpwdw==' } }), 401, 'unauthorized');
  });

  it('nothing invalid reaches the repository', async () => {
    const before = commitCount(svc.gitdir());
    await api.put(configPath, { rolloutPct: 500 });
    await api.put(configPath, { rules: [{ serve: 'on', conditions: [{ attribute: 'v', op: 'semver_gt', value: 'one' }] }] });
    await api.request('PUT', configPath, { rawBody: '{', headers: { 'content-type': 'application/json' } });
    expect(commitCount(svc.gitdir())).toBe(before);
  });
});
