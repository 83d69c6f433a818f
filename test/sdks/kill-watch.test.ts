import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGoCommand, GO_MISSING, GO_SDK, PYTHON_MISSING, PYTHON_SDK, startWatch } from '../helpers/sdk-tools.js';
import { killRequest, type SdkHarness, startSdkHarness } from '../sdk/sdk-harness.js';
import { tempDir } from './sdk-fixture.js';

const context = JSON.stringify({ userId: 'user-1', attributes: { country: 'FR', appVersion: '3.1.0' } });

interface WatchLine {
  flag: string;
  result: { value: unknown; reason: string };
  at: string;
}

describe.skipIf(PYTHON_MISSING !== null && GO_MISSING !== null)('a kill reaches an application using the Go or Python SDK', () => {
  let h: SdkHarness;
  let tmp: { dir: string; remove: () => Promise<void> };

  beforeAll(async () => {
    h = await startSdkHarness();
    tmp = await tempDir('flagops-watch-');
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
    await tmp?.remove();
  });

  /** `watch` prints the flag at start, then the kill within one second of it, then the clearing. */
  async function killSeenBy(command: string, args: string[], cwd: string) {
    const watch = startWatch(
      command,
      [...args, 'watch', '--url', h.service.evalUrl, '--sdk-key', h.key, '--context', context, 'new-checkout'],
      cwd,
    );
    try {
      const first = JSON.parse(await watch.line(0, 30_000)) as WatchLine;
      expect(first).toMatchObject({ flag: 'new-checkout', result: { value: true, reason: 'rule_match' } });
      expect(Number.isNaN(Date.parse(first.at))).toBe(false);
      await h.kills.kill(killRequest(h, 'new-checkout'));
      const killed = JSON.parse(await watch.line(1, 1_000)) as WatchLine; // the deadline is the promise: within 1 s
      expect(killed.result).toEqual({ value: false, reason: 'killed', variation: 'off' });
      await h.kills.clear(killRequest(h, 'new-checkout'));
      const cleared = JSON.parse(await watch.line(2, 5_000)) as WatchLine;
      expect(cleared.result.reason).toBe('rule_match');
      expect(watch.lines).toHaveLength(3); // a line per change of the result, none for changes that leave it as it was
    } finally {
      await watch.stop();
    }
  }

  it.skipIf(PYTHON_MISSING !== null)(
    'python3 -m flagops watch',
    async () => {
      await killSeenBy('python3', ['-m', 'flagops'], PYTHON_SDK);
    },
    120_000,
  );

  it.skipIf(GO_MISSING !== null)(
    'go run ./cmd/flagops watch (built once)',
    async () => {
      await killSeenBy(await buildGoCommand(tmp.dir), [], GO_SDK);
    },
    300_000,
  );
});
