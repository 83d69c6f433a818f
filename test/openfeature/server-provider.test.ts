import { bucket } from '@flagops/core';
import { FlagopsProvider } from '@flagops/openfeature';
import { createClient } from '@flagops/sdk';
import { OpenFeature, ProviderEvents, ProviderStatus } from '@openfeature/server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkKey } from '../eval-server/harness.js';
import { until } from '../helpers/deadlines.js';
import {
  ADMIN_KEY,
  killRequest,
  quiet,
  recordingFetch,
  type SdkHarness,
  startSdkHarness,
  watchedScheduler,
  watchServerStreams,
} from '../sdk/sdk-harness.js';

const eu = { targetingKey: 'user-1', country: 'DE', appVersion: '2.4.0' };

/** Resolves with the details of the next `event` the client hears, or rejects after `ms`. */
function nextProviderEvent(client: ReturnType<typeof OpenFeature.getClient>, event: ProviderEvents, ms = 3_000) {
  return new Promise<unknown>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event} within ${ms} ms`)), ms);
    const handler = (details: unknown) => {
      clearTimeout(timer);
      client.removeHandler(event, handler);
      resolve(details);
    };
    client.addHandler(event, handler);
  });
}

describe('the OpenFeature server provider (@openfeature/server-sdk)', () => {
  let h: SdkHarness;

  beforeAll(async () => {
    h = await startSdkHarness();
  });
  afterAll(async () => {
    await OpenFeature.close();
    await h?.stop();
  });

  for (const mode of ['local', 'remote'] as const) {
    describe(`over a ${mode}-mode client`, () => {
      let client: ReturnType<typeof OpenFeature.getClient>;

      beforeAll(async () => {
        await OpenFeature.setProviderAndWait(
          `server-${mode}`,
          new FlagopsProvider({ evalUrl: h.service.evalUrl, sdkKey: h.key, mode, logger: quiet }),
        );
        client = OpenFeature.getClient(`server-${mode}`);
      });

      it('is READY once the first snapshot or version is in', () => {
        expect(client.providerStatus).toBe(ProviderStatus.READY);
        expect(client.metadata.providerMetadata.name).toBe('flagops');
      });

      it('maps a rule match to TARGETING_MATCH with the variant and the rule in the metadata', async () => {
        expect(await client.getBooleanDetails('new-checkout', false, eu)).toMatchObject({
          value: true,
          reason: 'TARGETING_MATCH',
          variant: 'on',
          flagMetadata: { flagopsReason: 'rule_match', ruleId: 'eu-new-app' },
        });
      });

      it('maps a rollout to SPLIT, bucketing on targetingKey as userId', async () => {
        const details = await client.getBooleanDetails('new-checkout', true, { targetingKey: 'user-42' });
        expect(details).toMatchObject({
          value: false,
          reason: 'SPLIT',
          variant: 'off',
          flagMetadata: { flagopsReason: 'rollout', bucket: bucket('new-checkout', 'user-42') },
        });
      });

      it('maps flag_disabled to DISABLED and archived to DEFAULT', async () => {
        expect(await client.getBooleanDetails('dark-mode', true)).toMatchObject({
          value: false,
          reason: 'DISABLED',
          flagMetadata: { flagopsReason: 'flag_disabled' },
        });
        expect(await client.getBooleanDetails('old-search', true)).toMatchObject({
          value: false,
          reason: 'DEFAULT',
          flagMetadata: { archived: true },
        });
      });

      it('resolves strings, numbers and objects', async () => {
        expect(await client.getStringValue('banner-text', 'x')).toBe('Spring sale');
        expect(await client.getNumberValue('max-items', 0)).toBe(50);
        expect(await client.getObjectValue('theme', {})).toEqual({ color: 'teal', dense: true });
      });

      it('answers an unknown flag with ERROR and FLAG_NOT_FOUND, and a wrong type with TYPE_MISMATCH', async () => {
        expect(await client.getBooleanDetails('no-such-flag', true)).toMatchObject({
          value: true,
          reason: 'ERROR',
          errorCode: 'FLAG_NOT_FOUND',
        });
        expect(await client.getNumberDetails('banner-text', 3)).toMatchObject({ value: 3, reason: 'ERROR', errorCode: 'TYPE_MISMATCH' });
        expect(await client.getObjectDetails('max-items', { a: 1 })).toMatchObject({
          value: { a: 1 },
          reason: 'ERROR',
          errorCode: 'TYPE_MISMATCH',
        });
      });

      it('maps a kill to DISABLED with killed in the metadata, and says so with ConfigurationChanged', async () => {
        const changed = nextProviderEvent(client, ProviderEvents.ConfigurationChanged);
        await h.kills.kill(killRequest(h, 'max-items'));
        expect(await changed).toMatchObject({ flagsChanged: mode === 'local' ? ['max-items'] : expect.any(Array) });
        expect(await client.getNumberDetails('max-items', 0)).toMatchObject({
          value: 10,
          reason: 'DISABLED',
          variant: 'off',
          flagMetadata: { flagopsReason: 'killed', killed: true },
        });
        await h.kills.clear(killRequest(h, 'max-items'));
      });
    });
  }

  it('reports STALE while the server cannot be reached and READY again after, by provider events', async () => {
    let down = false;
    const recording = recordingFetch(() => down);
    const provider = new FlagopsProvider({
      evalUrl: h.service.evalUrl,
      sdkKey: h.key,
      fetch: recording.fetch,
      stream: false,
      pollIntervalMs: 30,
      retryInitialMs: 20,
      retryMaxMs: 50,
      logger: quiet,
    });
    await OpenFeature.setProviderAndWait('server-outage', provider);
    const client = OpenFeature.getClient('server-outage');
    const stale = nextProviderEvent(client, ProviderEvents.Stale);
    down = true;
    await stale;
    expect(client.providerStatus).toBe(ProviderStatus.STALE);
    expect(await client.getStringValue('banner-text', 'x')).toBe('Spring sale'); // the last good snapshot
    const ready = nextProviderEvent(client, ProviderEvents.Ready);
    down = false;
    await ready;
    expect(client.providerStatus).toBe(ProviderStatus.READY);
  });

  it('is ERROR when the key is refused, and answers with defaults rather than throwing', async () => {
    const provider = new FlagopsProvider({ evalUrl: h.service.evalUrl, sdkKey: 'svc_sdk_refusedrefused000000', logger: quiet });
    await expect(OpenFeature.setProviderAndWait('server-refused', provider)).rejects.toThrow();
    const client = OpenFeature.getClient('server-refused');
    expect(client.providerStatus).toBe(ProviderStatus.ERROR);
    expect(await client.getBooleanDetails('new-checkout', true, eu)).toMatchObject({
      value: true,
      reason: 'ERROR',
      errorCode: 'PROVIDER_NOT_READY',
    });
  });

  it('closes the client it made when OpenFeature closes the provider', async () => {
    // A key of its own, so that its stream is told apart from the other clients' at the server.
    const key = await sdkKey(h, 'shop', 'prod');
    const streams = watchServerStreams(key);
    const { scheduler, state } = watchedScheduler();
    try {
      const provider = new FlagopsProvider({ evalUrl: h.service.evalUrl, sdkKey: key, logger: quiet, scheduler, pollIntervalMs: 50 });
      await OpenFeature.setProviderAndWait('server-closing', provider);
      await until(
        async () => streams.open,
        (open) => open === 1,
      );
      expect(state.pending.size).toBeGreaterThan(0); // there is something to stop
      await provider.onClose();
      // What could make the client act again: a timer (poll, retry, count report) or the stream. Neither is left.
      expect(state.pending.size).toBe(0);
      await until(
        async () => streams.open,
        (open) => open === 0,
      );
    } finally {
      streams.stop();
    }
  });

  it('implements track: the event, with the details value, reaches the project events', async () => {
    const events = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, logger: quiet });
    await OpenFeature.setProviderAndWait('server-tracking', new FlagopsProvider({ client: events }));
    const client = OpenFeature.getClient('server-tracking');
    client.track('checkout', { targetingKey: 'user-1' }, { value: 30 });
    client.track('checkout', { targetingKey: 'user-2' }, { value: 12.25 });
    await events.close(); // sends what waits
    const res = await fetch(`${h.service.controlUrl}/api/v1/projects/prj_shop/events?environment=prod`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect((await res.json()).series.at(-1).counts.checkout).toEqual({ count: 2, sum: 42.25 });
  });
});
