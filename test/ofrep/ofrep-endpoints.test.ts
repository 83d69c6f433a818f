import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkKey } from '../eval-server/harness.js';
import { decodedText, rawRequest } from '../helpers/raw-http.js';
import { ADMIN_KEY, killRequest, type SdkHarness, setConfig, startSdkHarness } from '../sdk/sdk-harness.js';

const eu = { targetingKey: 'user-1', country: 'DE', appVersion: '2.4.0' };

describe('OFREP on the evaluation server (open-feature/protocol service/openapi.yaml)', () => {
  let h: SdkHarness;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${h.service.evalUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const flag = (key: string, body: unknown = { context: eu }, headers?: Record<string, string>) =>
    post(`/ofrep/v1/evaluate/flags/${key}`, body, headers);
  const bulk = (body: unknown = { context: eu }, headers?: Record<string, string>) => post('/ofrep/v1/evaluate/flags', body, headers);

  beforeAll(async () => {
    h = await startSdkHarness();
  });
  afterAll(() => h?.stop());

  describe('POST /ofrep/v1/evaluate/flags/{key}', () => {
    it('answers { key, value, reason, variant, metadata } with OpenFeature reasons', async () => {
      const res = await flag('new-checkout');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({
        key: 'new-checkout',
        value: true,
        reason: 'TARGETING_MATCH',
        variant: 'on',
        metadata: { flagopsReason: 'rule_match', ruleId: 'eu-new-app' },
      });
      expect(await (await flag('new-checkout', { context: { targetingKey: 'user-42' } })).json()).toMatchObject({
        value: false,
        reason: 'SPLIT',
        variant: 'off',
      });
      expect(await (await flag('dark-mode', {})).json()).toMatchObject({
        value: false,
        reason: 'DISABLED',
        metadata: { flagopsReason: 'flag_disabled' },
      });
      expect(await (await flag('banner-text')).json()).toMatchObject({ value: 'Spring sale', reason: 'DEFAULT' });
    });

    it('serves an archived flag as DEFAULT, leaving value out when there is no defaultValue (OFREP ADR-0006)', async () => {
      expect(await (await flag('old-search')).json()).toEqual({
        key: 'old-search',
        value: false,
        reason: 'DEFAULT',
        variant: 'default',
        metadata: { flagopsReason: 'archived', archived: true },
      });
      expect(await (await flag('old-banner')).json()).toEqual({
        key: 'old-banner',
        reason: 'DEFAULT',
        variant: 'default',
        metadata: { flagopsReason: 'archived', archived: true },
      });
    });

    it('serves a kill as DISABLED with killed in the metadata', async () => {
      await h.kills.kill(killRequest(h, 'max-items'));
      expect(await (await flag('max-items')).json()).toEqual({
        key: 'max-items',
        value: 10,
        reason: 'DISABLED',
        variant: 'off',
        metadata: { flagopsReason: 'killed', killed: true },
      });
      await h.kills.clear(killRequest(h, 'max-items'));
    });

    it('answers an unknown flag with 404 FLAG_NOT_FOUND', async () => {
      const res = await flag('no-such-flag');
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({
        key: 'no-such-flag',
        errorCode: 'FLAG_NOT_FOUND',
        errorDetails: expect.any(String),
        error: { code: 'not_found', message: expect.stringContaining('no-such-flag') },
      });
    });

    it("answers a key whose project is not on main with 404 in OFREP's shape, on both routes, as providers read it", async () => {
      const headers = { authorization: `Bearer ${await sdkKey(h, 'gone', 'prod')}` };
      const single = await flag('new-checkout', { context: eu }, headers);
      expect(single.status).toBe(404);
      expect(await single.json()).toEqual({
        key: 'new-checkout',
        errorCode: 'FLAG_NOT_FOUND',
        errorDetails: 'project prj_gone of this sdk key not found',
        error: { code: 'not_found', message: 'project prj_gone of this sdk key not found' },
      });
      const all = await bulk({ context: eu }, headers);
      expect(all.status).toBe(404);
      expect(await all.json()).toEqual({
        errorCode: 'GENERAL',
        errorDetails: 'project prj_gone of this sdk key not found',
        error: { code: 'not_found', message: 'project prj_gone of this sdk key not found' },
      });
    });

    it('answers a flag key that is not valid percent-encoding with 400 PARSE_ERROR naming it', async () => {
      for (const key of ['%ff', 'new-%E0%A4%A']) {
        const res = await flag(key);
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual({
          key,
          errorCode: 'PARSE_ERROR',
          errorDetails: 'the flag key in the path is not valid percent-encoding',
          error: { code: 'invalid_input', message: 'the flag key in the path is not valid percent-encoding' },
        });
      }
    });

    it('answers a body that is not JSON with 400 PARSE_ERROR, a bad context with 400 INVALID_CONTEXT', async () => {
      const parse = await flag('new-checkout', '{"context":');
      expect(parse.status).toBe(400);
      expect(await parse.json()).toEqual({
        key: 'new-checkout',
        errorCode: 'PARSE_ERROR',
        errorDetails: expect.any(String),
        error: { code: 'invalid_input', message: expect.any(String) },
      });
      for (const body of [{ context: 'user-1' }, { context: [1] }, { context: { targetingKey: 42 } }]) {
        const res = await flag('new-checkout', body);
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ key: 'new-checkout', errorCode: 'INVALID_CONTEXT' });
      }
    });

    it('answers a body over 1 MiB with 413 and one not sent as JSON with 415, on both routes, as every route does', async () => {
      const big = JSON.stringify({ context: { targetingKey: 'x'.repeat(1024 * 1024) } });
      for (const send of [(body: string, headers?: Record<string, string>) => flag('new-checkout', body, headers), bulk]) {
        const tooLarge = await send(big);
        expect([tooLarge.status, ((await tooLarge.json()) as { error: { code: string } }).error.code]).toEqual([413, 'payload_too_large']);
        const notJson = await send('{}', { 'content-type': 'text/plain' });
        expect([notJson.status, ((await notJson.json()) as { error: { code: string } }).error.code]).toEqual([
          415,
          'unsupported_media_type',
        ]);
      }
    });

    it('evaluates without a targetingKey as it does without a userId, rather than TARGETING_KEY_MISSING', async () => {
      const res = await flag('new-checkout', { context: { country: 'US' } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ value: false, reason: 'SPLIT', variant: 'off' });
    });

    it('refuses a missing or unknown key with 401', async () => {
      expect((await flag('new-checkout', {}, { authorization: '' })).status).toBe(401);
      expect((await flag('new-checkout', {}, { authorization: 'Bearer svc_sdk_nope' })).status).toBe(401);
      expect((await flag('new-checkout', {}, { authorization: `Bearer ${ADMIN_KEY}` })).status).toBe(401);
    });

    it('is counted in the flag stats like POST /v1/evaluate', async () => {
      const statsOf = async () => {
        const res = await fetch(`${h.service.controlUrl}/api/v1/flags/flg_shop_theme/environments/prod/stats`, {
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        });
        return ((await res.json()).series as Array<{ variations: Record<string, number> }>).reduce((n, s) => n + (s.variations.on ?? 0), 0);
      };
      const before = await statsOf();
      await flag('theme');
      await flag('theme');
      expect((await statsOf()) - before).toBe(2);
    });
  });

  describe('POST /ofrep/v1/evaluate/flags (bulk)', () => {
    it('evaluates every flag of the environment for the context, with an ETag', async () => {
      const res = await bulk();
      expect(res.status).toBe(200);
      expect(res.headers.get('etag')).toMatch(/^"v\d+-[\w-]+"$/);
      const body = await res.json();
      expect(body.flags.map((f: { key: string }) => f.key).sort()).toEqual([
        'banner-text',
        'dark-mode',
        'max-items',
        'new-checkout',
        'old-banner',
        'old-search',
        'theme',
      ]);
      expect(body.flags.find((f: { key: string }) => f.key === 'new-checkout')).toEqual({
        key: 'new-checkout',
        value: true,
        reason: 'TARGETING_MATCH',
        variant: 'on',
        metadata: { flagopsReason: 'rule_match', ruleId: 'eu-new-app' },
      });
      expect(body.metadata).toEqual({ version: h.service.holder.view('acme', 'prj_shop', 'prod')!.version });
    });

    it('answers If-None-Match with 304 while neither the snapshot nor the context changes', async () => {
      const etag = (await bulk()).headers.get('etag')!;
      const again = await bulk({ context: eu }, { 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(await again.text()).toBe('');
    });

    it('changes the ETag when the context changes', async () => {
      const etag = (await bulk()).headers.get('etag')!;
      const other = await bulk({ context: { ...eu, country: 'FR' } }, { 'if-none-match': etag });
      expect(other.status).toBe(200);
      expect(other.headers.get('etag')).not.toBe(etag);
    });

    it('changes the ETag when the snapshot changes, a kill included', async () => {
      const etag = (await bulk()).headers.get('etag')!;
      await setConfig(h, 'banner-text', { valueOn: 'Bulk sale', valueOff: 'Welcome' });
      const changed = await bulk({ context: eu }, { 'if-none-match': etag });
      expect(changed.status).toBe(200);
      const next = changed.headers.get('etag')!;
      expect(next).not.toBe(etag);
      await h.kills.kill(killRequest(h, 'theme'));
      expect((await bulk({ context: eu }, { 'if-none-match': next })).status).toBe(200);
      await h.kills.clear(killRequest(h, 'theme'));
    });

    it('answers a bad request with 400 and { errorCode, errorDetails }', async () => {
      const res = await bulk('not json');
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        errorCode: 'PARSE_ERROR',
        errorDetails: expect.any(String),
        error: { code: 'invalid_input', message: expect.any(String) },
      });
      const context = await bulk({ context: 7 });
      expect(await context.json()).toMatchObject({ errorCode: 'INVALID_CONTEXT' });
    });

    it('is compressed as Accept-Encoding asks, decoding to the identity body, with the same ETag and a Vary', async () => {
      const send = (headers: Record<string, string>) =>
        rawRequest(`${h.service.evalUrl}/ofrep/v1/evaluate/flags`, {
          method: 'POST',
          headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ context: eu }),
        });
      const identity = await send({});
      expect(identity.headers['content-encoding']).toBeUndefined();
      expect(identity.headers.vary).toBe('Authorization, Accept-Encoding');
      for (const [accept, coding] of [
        ['gzip', 'gzip'],
        ['gzip, deflate, br', 'br'],
        ['br;q=0, gzip', 'gzip'],
        ['gzip;q=0', undefined],
      ] as const) {
        const res = await send({ 'accept-encoding': accept });
        expect(res.status).toBe(200);
        expect(res.headers['content-encoding']).toBe(coding);
        expect(res.headers.etag).toBe(identity.headers.etag);
        expect(res.headers.vary).toBe('Authorization, Accept-Encoding');
        expect(decodedText(res)).toBe(identity.body.toString('utf8'));
        const notModified = await send({ 'accept-encoding': accept, 'if-none-match': identity.headers.etag! });
        expect(notModified.status).toBe(304);
        expect(notModified.headers.vary).toBe('Authorization, Accept-Encoding');
      }
    });

    it('lets browsers send If-None-Match and read the ETag (CORS)', async () => {
      const pre = await fetch(`${h.service.evalUrl}/ofrep/v1/evaluate/flags`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type,if-none-match',
        },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-headers')).toMatch(/if-none-match/i);
      expect((await bulk()).headers.get('access-control-expose-headers')).toMatch(/etag/i);
    });
  });

  it('describes itself at GET /ofrep/v1/configuration', async () => {
    const res = await fetch(`${h.service.evalUrl}/ofrep/v1/configuration`, { headers: { authorization: `Bearer ${h.key}` } });
    expect(await res.json()).toMatchObject({ name: 'flagops', capabilities: { cacheInvalidation: { polling: { enabled: true } } } });
  });
});
