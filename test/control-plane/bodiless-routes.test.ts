import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { createFlag, createProject } from './fixtures.js';

/** Routes that take no body (archiving a flag, deleting a segment) refuse one they would ignore, changing nothing. */
describe('a DELETE sent a body', () => {
  let svc: TestService;
  let admin: HttpClient;
  let project: Json;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(admin, 'shop');
  });
  afterAll(() => svc.stop());

  const archive = (flag: Json, options: { rawBody?: string; headers?: Record<string, string> }) =>
    admin.request('DELETE', `/api/v1/flags/${flag.id}`, options);
  const json = { 'content-type': 'application/json' };

  it('is refused as any body would be (415, 413, 400 naming the fields), and the flag is not archived', async () => {
    const flag = await createFlag(admin, project.id, { key: 'kept' });
    const refusals: Array<[{ rawBody: string; headers: Record<string, string> }, number, string]> = [
      [{ rawBody: 'hello', headers: { 'content-type': 'text/plain' } }, 415, 'unsupported_media_type'],
      [{ rawBody: '{"expectedVersion":99,"unknownField":true}', headers: json }, 400, 'invalid_input'],
      [{ rawBody: 'not json', headers: json }, 400, 'invalid_input'],
      [{ rawBody: 'a'.repeat(2 * 1024 * 1024), headers: json }, 413, 'payload_too_large'],
    ];
    for (const [request, status, code] of refusals) {
      const res = await archive(flag, request);
      expect([res.status, res.body.error?.code], request.rawBody.slice(0, 40)).toEqual([status, code]);
    }
    expect((await archive(flag, { rawBody: '{"expectedVersion":99,"unknownField":true}', headers: json })).body.error.message).toContain(
      'unknown fields expectedVersion, unknownField',
    );
    expect((await admin.get(`/api/v1/flags/${flag.id}`)).body.archivedAt).toBeFalsy();
  });

  it('with no body, or an empty JSON object, does what it says', async () => {
    for (const [key, request] of [
      ['without-body', {}],
      ['empty-object', { rawBody: '{}', headers: json }],
    ] as const) {
      const flag = await createFlag(admin, project.id, { key });
      expect((await archive(flag, request)).status).toBe(200);
      expect((await admin.get(`/api/v1/flags/${flag.id}`)).body.archivedAt).toEqual(expect.any(String));
    }
  });
});
