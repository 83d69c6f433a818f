import { FlagopsWebProvider } from '@flagops/openfeature/web';
import { createClient } from '@flagops/sdk';
import { type EventDetails, OpenFeature, ProviderEvents, ProviderStatus } from '@openfeature/web-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, killRequest, quiet, type SdkHarness, startSdkHarness } from '../sdk/sdk-harness.js';

describe('the OpenFeature web provider (@openfeature/web-sdk)', () => {
  let h: SdkHarness;
  let provider: FlagopsWebProvider;
  let client: ReturnType<typeof OpenFeature.getClient>;

  beforeAll(async () => {
    h = await startSdkHarness();
    provider = new FlagopsWebProvider({ evalUrl: h.service.evalUrl, sdkKey: h.key, logger: quiet });
    await OpenFeature.setContext({ targetingKey: 'user-1', country: 'DE', appVersion: '2.4.0' });
    await OpenFeature.setProviderAndWait(provider);
    client = OpenFeature.getClient();
  });
  afterAll(async () => {
    await OpenFeature.close();
    await h?.stop();
  });

  it('is READY and resolves synchronously with the static context: targetingKey as userId, the rest as attributes', () => {
    expect(client.providerStatus).toBe(ProviderStatus.READY);
    expect(client.getBooleanDetails('new-checkout', false)).toMatchObject({
      value: true,
      reason: 'TARGETING_MATCH',
      variant: 'on',
      flagMetadata: { ruleId: 'eu-new-app' },
    });
    expect(client.getStringValue('banner-text', 'x')).toBe('Spring sale');
    expect(client.getNumberValue('max-items', 0)).toBe(50);
    expect(client.getObjectValue('theme', {})).toEqual({ color: 'teal', dense: true });
  });

  it('follows a context change without a request: the next resolution uses the new context', async () => {
    await OpenFeature.setContext({ targetingKey: 'user-42' });
    expect(client.getBooleanDetails('new-checkout', true)).toMatchObject({
      value: false,
      reason: 'SPLIT',
      flagMetadata: { bucket: expect.any(Number) },
    });
    await OpenFeature.setContext({ targetingKey: 'user-1', country: 'DE', appVersion: '2.4.0' });
  });

  it('answers errors with the default: FLAG_NOT_FOUND and TYPE_MISMATCH', () => {
    expect(client.getBooleanDetails('no-such-flag', true)).toMatchObject({ value: true, reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' });
    expect(client.getBooleanDetails('banner-text', true)).toMatchObject({ value: true, reason: 'ERROR', errorCode: 'TYPE_MISMATCH' });
  });

  it('emits ConfigurationChanged with the flag when a kill arrives over the stream, and resolves DISABLED', async () => {
    const changed = new Promise<{ flagsChanged?: string[] }>((resolve) => {
      const handler = (details?: EventDetails) => {
        client.removeHandler(ProviderEvents.ConfigurationChanged, handler);
        resolve((details ?? {}) as { flagsChanged?: string[] });
      };
      client.addHandler(ProviderEvents.ConfigurationChanged, handler);
    });
    await h.kills.kill(killRequest(h, 'new-checkout'));
    expect((await changed).flagsChanged).toEqual(['new-checkout']);
    expect(client.getBooleanDetails('new-checkout', true)).toMatchObject({
      value: false,
      reason: 'DISABLED',
      flagMetadata: { killed: true },
    });
    await h.kills.clear(killRequest(h, 'new-checkout'));
  });

  it('refuses remote mode, which cannot answer synchronously', () => {
    expect(() => new FlagopsWebProvider({ evalUrl: h.service.evalUrl, sdkKey: h.key, mode: 'remote' } as never)).toThrow(TypeError);
    const remote = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, mode: 'remote', logger: quiet });
    expect(() => new FlagopsWebProvider({ client: remote as never })).toThrow(TypeError);
    void remote.close();
  });

  it('implements track: the event, with the details value, reaches the project events for the static context', async () => {
    const events = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, logger: quiet });
    const tracking = new FlagopsWebProvider({ client: events });
    await OpenFeature.setProviderAndWait('web-tracking', tracking);
    OpenFeature.getClient('web-tracking').track('web-checkout', { value: 42.5, currency: 'EUR' });
    await events.close(); // sends what waits
    const res = await fetch(`${h.service.controlUrl}/api/v1/projects/prj_shop/events?environment=prod`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect((await res.json()).series.at(-1).counts['web-checkout']).toEqual({ count: 1, sum: 42.5 });
  });
});
