import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import { OpenFeature as ServerOpenFeature } from '@openfeature/server-sdk';
import { ProviderEvents, ProviderStatus, OpenFeature as WebOpenFeature } from '@openfeature/web-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/deadlines.js';
import { type SdkHarness, setConfig, startSdkHarness } from '../sdk/sdk-harness.js';

const eu = { targetingKey: 'user-1', country: 'DE', appVersion: '2.4.0' };

/** A fetch for the OFREP providers that records the status of each bulk request. */
function recordingFetch() {
  const statuses: number[] = [];
  const fetchImplementation = async (input: RequestInfo | URL, init?: RequestInit) => {
    const res = await fetch(input, init);
    if (new URL(input instanceof Request ? input.url : String(input)).pathname === '/ofrep/v1/evaluate/flags') statuses.push(res.status);
    return res;
  };
  return { statuses, fetchImplementation };
}

describe('flagops through the official OFREP providers', () => {
  let h: SdkHarness;

  beforeAll(async () => {
    h = await startSdkHarness();
  });
  afterAll(async () => {
    await ServerOpenFeature.close();
    await WebOpenFeature.close();
    await h?.stop();
  });

  describe('@openfeature/ofrep-provider with the server SDK (single-flag evaluation)', () => {
    let client: ReturnType<typeof ServerOpenFeature.getClient>;

    beforeAll(async () => {
      await ServerOpenFeature.setProviderAndWait(
        'ofrep',
        new OFREPProvider({ baseUrl: h.service.evalUrl, headers: [['Authorization', `Bearer ${h.key}`]] }),
      );
      client = ServerOpenFeature.getClient('ofrep');
    });

    it('resolves each type with reason, variant and metadata', async () => {
      expect(await client.getBooleanDetails('new-checkout', false, eu)).toMatchObject({
        value: true,
        reason: 'TARGETING_MATCH',
        variant: 'on',
        flagMetadata: { ruleId: 'eu-new-app' },
      });
      expect(await client.getBooleanDetails('new-checkout', true, { targetingKey: 'user-42' })).toMatchObject({
        value: false,
        reason: 'SPLIT',
      });
      expect(await client.getStringValue('banner-text', 'x')).toBe('Spring sale');
      expect(await client.getNumberValue('max-items', 0)).toBe(50);
      expect(await client.getObjectValue('theme', {})).toEqual({ color: 'teal', dense: true });
    });

    it('gets FLAG_NOT_FOUND for an unknown flag and TYPE_MISMATCH for a wrong type', async () => {
      expect(await client.getBooleanDetails('no-such-flag', true)).toMatchObject({
        value: true,
        reason: 'ERROR',
        errorCode: 'FLAG_NOT_FOUND',
      });
      expect(await client.getBooleanDetails('banner-text', true)).toMatchObject({
        value: true,
        reason: 'ERROR',
        errorCode: 'TYPE_MISMATCH',
      });
    });

    it('falls back to the default when the key is refused', async () => {
      await ServerOpenFeature.setProviderAndWait(
        'ofrep-refused',
        new OFREPProvider({ baseUrl: h.service.evalUrl, headers: [['Authorization', 'Bearer svc_sdk_nope']] }),
      );
      expect(await ServerOpenFeature.getClient('ofrep-refused').getBooleanDetails('new-checkout', true, eu)).toMatchObject({
        value: true,
        reason: 'ERROR',
      });
    });
  });

  describe('@openfeature/ofrep-web-provider with the web SDK (bulk evaluation, ETag polling)', () => {
    const recording = recordingFetch();
    let client: ReturnType<typeof WebOpenFeature.getClient>;

    beforeAll(async () => {
      // Node has no localStorage: the provider's persistent cache is turned off; it needs no other browser global.
      const provider = new OFREPWebProvider({
        baseUrl: h.service.evalUrl,
        headers: [['Authorization', `Bearer ${h.key}`]],
        pollInterval: 100,
        cacheMode: 'disabled',
        fetchImplementation: recording.fetchImplementation,
      });
      await WebOpenFeature.setContext('ofrep-web', eu);
      await WebOpenFeature.setProviderAndWait('ofrep-web', provider);
      client = WebOpenFeature.getClient('ofrep-web');
    });

    it('is READY and resolves every flag from one bulk evaluation', () => {
      expect(client.providerStatus).toBe(ProviderStatus.READY);
      expect(client.getBooleanDetails('new-checkout', false)).toMatchObject({ value: true, reason: 'TARGETING_MATCH', variant: 'on' });
      expect(client.getStringValue('banner-text', 'x')).toBe('Spring sale');
      expect(client.getBooleanDetails('dark-mode', true)).toMatchObject({ value: false, reason: 'DISABLED' });
      expect(client.getStringDetails('old-banner', 'mine')).toMatchObject({ value: 'mine', reason: 'DEFAULT' }); // no value: the code default
      expect(client.getBooleanDetails('no-such-flag', true)).toMatchObject({ value: true, errorCode: 'FLAG_NOT_FOUND' });
    });

    it('polls with If-None-Match: 304s until the snapshot changes, then ConfigurationChanged with the flag', async () => {
      await until(
        async () => recording.statuses.length,
        (answered) => answered >= 3,
      ); // the first evaluation and two polls
      expect(recording.statuses[0]).toBe(200);
      expect(recording.statuses.slice(1).length).toBeGreaterThanOrEqual(2);
      expect(new Set(recording.statuses.slice(1))).toEqual(new Set([304]));
      const changed = new Promise<{ flagsChanged?: string[] }>((resolve) =>
        client.addHandler(ProviderEvents.ConfigurationChanged, (d) => resolve(d ?? {})),
      );
      await setConfig(h, 'banner-text', { valueOn: 'OFREP sale', valueOff: 'Welcome' });
      expect((await changed).flagsChanged).toEqual(['banner-text']);
      expect(client.getStringValue('banner-text', 'x')).toBe('OFREP sale');
    });

    it('re-evaluates for a new context', async () => {
      await WebOpenFeature.setContext('ofrep-web', { targetingKey: 'user-42' });
      expect(client.getBooleanDetails('new-checkout', true)).toMatchObject({ value: false, reason: 'SPLIT' });
    });
  });
});
