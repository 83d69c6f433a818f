import type { Snapshot } from '@flagops/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRawStream } from '../sdk/raw-stream.js';
import { killRequest, type SdkHarness, setConfig, startSdkHarness } from '../sdk/sdk-harness.js';
import { applyDelta, changeSequence, sequenceProjectFiles } from './change-sequence.js';
import { commitFiles, ORG, projectFiles } from './harness.js';

interface Delta {
  version: number;
  environment: string;
  since: number;
  flags: Record<string, unknown>;
  segments: Record<string, unknown>;
}

describe('GET /v1/snapshot?since= (docs/evaluation-server.md, "Deltas")', () => {
  let h: SdkHarness;
  const get = (query = '', headers: Record<string, string> = {}) =>
    fetch(`${h.service.evalUrl}/v1/snapshot${query}`, { headers: { authorization: `Bearer ${h.key}`, ...headers } });
  const snapshot = async () => (await (await get()).json()) as Snapshot;
  const currentVersion = () => h.service.holder.view(ORG, 'prj_shop', 'prod')!.version;

  beforeAll(async () => {
    h = await startSdkHarness();
    await commitFiles(h.repo, sequenceProjectFiles(), 'the segment and the flag naming it');
    await h.service.holder.served(ORG);
  });
  afterAll(() => h?.stop());

  it('answers each change of a sequence with a delta that, applied to the snapshot of since, gives the full snapshot', async () => {
    const first = await snapshot();
    let before = first;
    for (const step of changeSequence()) {
      await step.run(h);
      const after = await snapshot();
      expect(after.version, step.name).toBeGreaterThan(before.version);
      const res = await get(`?since=${before.version}`);
      expect(res.status, step.name).toBe(200);
      expect(res.headers.get('etag'), step.name).toBe(`"v${after.version}"`);
      const delta = (await res.json()) as Delta;
      expect(delta.since, step.name).toBe(before.version);
      expect({ version: delta.version, environment: delta.environment }).toEqual({ version: after.version, environment: 'prod' });
      expect(applyDelta(before, delta), step.name).toEqual(after);
      before = after;
    }
    // Across every step at once, too.
    const whole = (await (await get(`?since=${first.version}`)).json()) as Delta;
    expect(whole.since).toBe(first.version);
    expect(applyDelta(first, whole)).toEqual(before);
  });

  it('holds only what changed, with null for what was removed, and killed entries as the snapshot has them', async () => {
    const before = await snapshot();
    await h.kills.kill(killRequest(h, 'new-checkout'));
    const killed = (await (await get(`?since=${before.version}`)).json()) as Delta;
    expect(Object.keys(killed.flags)).toEqual(['new-checkout']);
    expect(killed.flags['new-checkout']).toMatchObject({ killed: true });
    expect(killed.segments).toEqual({});
    const afterKill = await snapshot();
    await commitFiles(h.repo, [{ path: 'projects/shop/flags/dark-mode.yaml', content: null }, ...darkModeConfigs(null)]);
    await h.service.holder.served(ORG);
    const removed = (await (await get(`?since=${afterKill.version}`)).json()) as Delta;
    expect(removed.flags).toEqual({ 'dark-mode': null });
    await h.kills.clear(killRequest(h, 'new-checkout'));
  });

  it('still answers deltas from before a kill once a commit elsewhere has been served after it', async () => {
    // Two kills, the second of a flag listed before the first: the kills file, read again, orders them otherwise.
    await h.kills.kill(killRequest(h, 'new-checkout'));
    const before = await snapshot();
    await h.kills.kill(killRequest(h, 'banner-text'));
    const killed = await snapshot();
    // A commit that leaves prod as it is: the views are made again from main, at the kill's version.
    await setConfig(h, 'new-checkout', { rolloutPct: 33 }, 'dev');
    expect(currentVersion()).toBe(killed.version);
    const res = await get(`?since=${before.version}`);
    expect(res.status).toBe(200);
    const delta = (await res.json()) as Delta;
    expect(delta.since).toBe(before.version);
    expect(applyDelta(before, delta)).toEqual(await snapshot());
    await h.kills.clear(killRequest(h, 'banner-text'));
    await h.kills.clear(killRequest(h, 'new-checkout'));
  });

  it('answers 304 with the ETag when since is the current version, with or without If-None-Match', async () => {
    const version = currentVersion();
    for (const headers of [{}, { 'if-none-match': `"v${version}"` }] as Array<Record<string, string>>) {
      const res = await get(`?since=${version}`, headers);
      expect(res.status).toBe(304);
      expect(res.headers.get('etag')).toBe(`"v${version}"`);
      expect(await res.text()).toBe('');
    }
    // An If-None-Match naming the current version wins over an older since: nothing to send.
    const older = await snapshot();
    await setConfig(h, 'new-checkout', { rolloutPct: 12 });
    const res = await get(`?since=${older.version}`, { 'if-none-match': `"v${currentVersion()}"` });
    expect(res.status).toBe(304);
  });

  it('answers the full snapshot for a since it does not know: too old, in the future, malformed', async () => {
    const full = await snapshot();
    for (const since of ['0', String(full.version + 1), '99999999', 'abc', '-1', '1.5', '', `${full.version}&since=1`]) {
      const res = await get(`?since=${since}`);
      expect(res.status, `since=${since}`).toBe(200);
      expect(res.headers.get('etag')).toBe(`"v${full.version}"`);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body, `since=${since}`).not.toHaveProperty('since');
      expect(body).toEqual(full);
    }
  });

  it('answers the full snapshot for a version of another environment', async () => {
    const prodBefore = currentVersion();
    await setConfig(h, 'new-checkout', { rolloutPct: 33 }, 'staging');
    const stagingVersion = h.service.holder.view(ORG, 'prj_shop', 'staging')!.version;
    await setConfig(h, 'new-checkout', { rolloutPct: 34 }, 'prod');
    expect(stagingVersion).toBeGreaterThan(prodBefore);
    expect(currentVersion()).toBeGreaterThan(stagingVersion);
    const body = (await (await get(`?since=${stagingVersion}`)).json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty('since');
    expect(body).toEqual(await snapshot());
    // prod's own previous version is known.
    const delta = (await (await get(`?since=${prodBefore}`)).json()) as Delta;
    expect(delta.since).toBe(prodBefore);
  });

  it('keeps a window of the last 64 versions: older ones get the full snapshot', async () => {
    const oldest = currentVersion();
    const versions = [oldest];
    for (let i = 0; i < 65; i++) {
      await (i % 2 === 0 ? h.kills.kill(killRequest(h, 'banner-text')) : h.kills.clear(killRequest(h, 'banner-text')));
      versions.push(currentVersion());
    }
    const tooOld = (await (await get(`?since=${versions[0]}`)).json()) as Record<string, unknown>;
    expect(tooOld).not.toHaveProperty('since');
    const oldestKept = (await (await get(`?since=${versions[1]}`)).json()) as Delta;
    expect(oldestKept.since).toBe(versions[1]);
    expect(Object.keys(oldestKept.flags)).toEqual(['banner-text']);
  }, 60_000);
});

describe('version events on GET /v1/stream (docs/sdk.md, "Stream endpoint")', () => {
  let h: SdkHarness;
  const snapshot = async () =>
    (await (await fetch(`${h.service.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${h.key}` } })).json()) as Snapshot;
  const versionEvents = (events: Array<{ event: string; data: string }>) =>
    events
      .filter((e) => e.event === 'version')
      .map((e) => JSON.parse(e.data) as { version: number; since?: number; patch?: Pick<Delta, 'flags' | 'segments'> });

  beforeAll(async () => {
    h = await startSdkHarness();
    await commitFiles(h.repo, sequenceProjectFiles(), 'the segment and the flag naming it');
    await h.service.holder.served(ORG);
  });
  afterAll(() => h?.stop());

  it('carry since and a patch that takes the snapshot of since to the new version, through the whole sequence', async () => {
    let before = await snapshot();
    const stream = await openRawStream(`${h.service.evalUrl}/v1/stream`, { authorization: `Bearer ${h.key}` });
    await stream.until(() => versionEvents(stream.events).length === 1);
    expect(versionEvents(stream.events)[0]).toEqual({ version: before.version });
    for (const step of changeSequence()) {
      const seen = versionEvents(stream.events).length;
      await step.run(h);
      await stream.until(() => versionEvents(stream.events).length > seen);
      const after = await snapshot();
      const event = versionEvents(stream.events).at(-1)!;
      expect(event.version, step.name).toBe(after.version);
      expect(event.since, step.name).toBe(before.version);
      expect(applyDelta(before, { version: event.version, ...event.patch! }), step.name).toEqual(after);
      before = after;
    }
    stream.close();
  });

  it('carry no patch for a change over 64 KiB: clients fetch it', async () => {
    const before = await snapshot();
    const stream = await openRawStream(`${h.service.evalUrl}/v1/stream`, { authorization: `Bearer ${h.key}` });
    await stream.until(() => versionEvents(stream.events).length === 1);
    const many = Array.from({ length: 400 }, (_, i) => ({
      key: `bulk-${i}`,
      kind: 'string' as const,
      valueOn: 'x'.repeat(100),
      valueOff: 'y',
    }));
    await commitFiles(
      h.repo,
      projectFiles('shop', many).filter((f) => f.path.includes('/bulk-')),
    );
    await h.service.holder.served(ORG);
    await stream.until(() => versionEvents(stream.events).length === 2);
    const event = versionEvents(stream.events)[1];
    expect(event).toEqual({ version: (await snapshot()).version, since: before.version });
    expect(stream.text()).not.toContain('"patch"');
    stream.close();
  });

  it('start with the patch from the version a reconnecting client names (?since= or Last-Event-ID)', async () => {
    const before = await snapshot();
    await setConfig(h, 'new-checkout', { rolloutPct: 71 });
    const after = await snapshot();
    for (const [query, headers] of [
      [`?since=${before.version}`, {}],
      ['', { 'last-event-id': String(before.version) }],
    ] as const) {
      const stream = await openRawStream(`${h.service.evalUrl}/v1/stream${query}`, { authorization: `Bearer ${h.key}`, ...headers });
      await stream.until(() => versionEvents(stream.events).length === 1);
      const first = versionEvents(stream.events)[0];
      expect(first.since).toBe(before.version);
      expect(applyDelta(before, { version: first.version, ...first.patch! })).toEqual(after);
      stream.close();
    }
    // A client that names the current version gets the version alone; one the server does not know gets the
    // version it follows and no patch, so it fetches.
    for (const [since, expected] of [
      [after.version, { version: after.version }],
      [1, { version: after.version, since: 1 }],
    ] as const) {
      const stream = await openRawStream(`${h.service.evalUrl}/v1/stream?since=${since}`, { authorization: `Bearer ${h.key}` });
      await stream.until(() => versionEvents(stream.events).length === 1);
      expect(versionEvents(stream.events)[0]).toEqual(expected);
      stream.close();
    }
  });
});

function darkModeConfigs(content: null) {
  return (['dev', 'staging', 'prod'] as const).map((env) => ({ path: `projects/shop/environments/${env}/dark-mode.yaml`, content }));
}
