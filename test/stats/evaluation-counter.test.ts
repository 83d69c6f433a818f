import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EvaluationCounter, type EvaluationCounterOptions, type Every, statsScope } from '../../src/features/stats/evaluation-counter.js';
import { HOUR_MS } from '../../src/features/stats/hours.js';
import { InvalidInputError } from '../../src/foundations/errors/kinds.js';
import { FileCountStore, type FileCountStoreOptions } from '../../src/foundations/state/files/file-count-store.js';
import { stateIn } from '../helpers/control-state.js';

const SCOPE = statsScope('acme', 'p1', 'prod');
const T0 = Date.parse('2025-03-01T12:15:00.000Z');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-stats-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A timer driven by the test: `tick()` runs what `every` scheduled. */
function manualTimer() {
  const scheduled: Array<{ ms: number; fn: () => void; stopped: boolean }> = [];
  const every: Every = (ms, fn) => {
    const entry = { ms, fn, stopped: false };
    scheduled.push(entry);
    return () => {
      entry.stopped = true;
    };
  };
  const tick = () => {
    for (const s of scheduled) if (!s.stopped) s.fn();
  };
  return { every, scheduled, tick };
}

async function openCounter(
  dataDir: string,
  clock: { now: number },
  { compactAboveBytes, ...extra }: Partial<EvaluationCounterOptions> & FileCountStoreOptions = {},
) {
  const counts = new FileCountStore(path.join(dataDir, 'stats'), { compactAboveBytes });
  const counter = await EvaluationCounter.open({ state: { counts }, now: () => clock.now, every: manualTimer().every, ...extra });
  cleanups.push(() => counter.close());
  return counter;
}

const logFile = (dataDir: string) => path.join(dataDir, 'stats', 'evaluations.jsonl');
const lastHour = (counter: EvaluationCounter, flagKey = 'checkout') =>
  counter.series({ scope: SCOPE, flagKey, period: '24h' }).series.at(-1);

describe('recorded evaluations', () => {
  it('are counted per variation in the current hour', async () => {
    const counter = await openCounter(await tempDir(), { now: T0 });
    counter.record(SCOPE, 'checkout', 'on');
    counter.record(SCOPE, 'checkout', 'on');
    counter.record(SCOPE, 'checkout', 'off');
    expect(lastHour(counter)).toEqual({ hour: '2025-03-01T12:00:00.000Z', variations: { on: 2, off: 1 } });
  });

  it('are visible in the series before any flush, so stats lag by nothing', async () => {
    const dataDir = await tempDir();
    const counter = await openCounter(dataDir, { now: T0 });
    counter.record(SCOPE, 'checkout', 'on');
    expect(await readFile(logFile(dataDir), 'utf8')).toBe('');
    expect(lastHour(counter)?.variations).toEqual({ on: 1 });
  });

  it('are kept apart by scope and flag', async () => {
    const counter = await openCounter(await tempDir(), { now: T0 });
    counter.record(SCOPE, 'checkout', 'on');
    counter.record(statsScope('acme', 'p1', 'dev'), 'checkout', 'on');
    counter.record(SCOPE, 'banner', 'off');
    expect(lastHour(counter)?.variations).toEqual({ on: 1 });
    expect(lastHour(counter, 'banner')?.variations).toEqual({ off: 1 });
  });

  it('fall into the hour of the injected clock, also when it crosses an hour boundary', async () => {
    const clock = { now: Date.parse('2025-03-01T12:59:59.999Z') };
    const counter = await openCounter(await tempDir(), clock);
    counter.record(SCOPE, 'checkout', 'on');
    clock.now += 1;
    counter.record(SCOPE, 'checkout', 'on');
    counter.record(SCOPE, 'checkout', 'off');
    clock.now = Date.parse('2025-03-01T12:30:00.000Z'); // the clock stepped back
    counter.record(SCOPE, 'checkout', 'off');
    const series = counter.series({ scope: SCOPE, flagKey: 'checkout', period: '24h', now: Date.parse('2025-03-01T13:10:00.000Z') }).series;
    expect(series.slice(-2)).toEqual([
      { hour: '2025-03-01T12:00:00.000Z', variations: { on: 1, off: 1 } },
      { hour: '2025-03-01T13:00:00.000Z', variations: { on: 1, off: 1 } },
    ]);
  });
});

describe('the series of a period', () => {
  it.each([
    ['24h', 24],
    ['7d', 168],
    ['30d', 720],
  ] as const)('%s has one entry per hour, %i in all, oldest first, ending with the current hour', async (period, hours) => {
    const counter = await openCounter(await tempDir(), { now: T0 });
    const { series } = counter.series({ scope: SCOPE, flagKey: 'checkout', period });
    expect(series).toHaveLength(hours);
    expect(series.at(-1)?.hour).toBe('2025-03-01T12:00:00.000Z');
    expect(Date.parse(series[0].hour)).toBe(Date.parse('2025-03-01T12:00:00.000Z') - (hours - 1) * HOUR_MS);
    for (let i = 1; i < series.length; i++) expect(Date.parse(series[i].hour) - Date.parse(series[i - 1].hour)).toBe(HOUR_MS);
  });

  it('zero-fills hours without evaluations with empty variations', async () => {
    const counter = await openCounter(await tempDir(), { now: T0 });
    counter.add(SCOPE, 'checkout', 'on', T0 - 3 * HOUR_MS, 5);
    const { series } = counter.series({ scope: SCOPE, flagKey: 'checkout', period: '24h' });
    expect(series.slice(-4).map((s) => s.variations)).toEqual([{ on: 5 }, {}, {}, {}]);
  });

  it('refuses an unknown period', async () => {
    const counter = await openCounter(await tempDir(), { now: T0 });
    expect(() => counter.series({ scope: SCOPE, flagKey: 'checkout', period: '1y' as '24h' })).toThrow(InvalidInputError);
  });

  it('adds flushed and not yet flushed counts of the same hour', async () => {
    const counter = await openCounter(await tempDir(), { now: T0 });
    counter.record(SCOPE, 'checkout', 'on');
    await counter.flush();
    counter.record(SCOPE, 'checkout', 'on');
    expect(lastHour(counter)?.variations).toEqual({ on: 2 });
  });
});

describe('counts reported in batches', () => {
  it('are added to the hour they name', async () => {
    const counter = await openCounter(await tempDir(), { now: T0 });
    expect(counter.add(SCOPE, 'checkout', 'on', Date.parse('2025-03-01T10:42:00.000Z'), 40)).toBe(true);
    counter.add(SCOPE, 'checkout', 'on', Date.parse('2025-03-01T10:00:00.000Z'), 2);
    const { series } = counter.series({ scope: SCOPE, flagKey: 'checkout', period: '24h' });
    expect(series.find((s) => s.hour === '2025-03-01T10:00:00.000Z')?.variations).toEqual({ on: 42 });
  });

  it('are dropped when older than 30 days, and refused when bad or in the future', async () => {
    const counter = await openCounter(await tempDir(), { now: T0 });
    expect(counter.add(SCOPE, 'checkout', 'on', T0 - 31 * 24 * HOUR_MS, 1)).toBe(false);
    expect(() => counter.add(SCOPE, 'checkout', 'on', T0 + 3 * HOUR_MS, 1)).toThrow(/future/);
    expect(() => counter.add(SCOPE, 'checkout', 'on', T0, 0)).toThrow(InvalidInputError);
    expect(() => counter.add(SCOPE, 'checkout', 'on', T0, 1.5)).toThrow(InvalidInputError);
    expect(() => counter.add(SCOPE, 'checkout', 'on', Number.NaN, 1)).toThrow(InvalidInputError);
  });
});

describe('durability', () => {
  it('flushed counts are read back by a new counter (as after a crash)', async () => {
    const dataDir = await tempDir();
    const clock = { now: T0 };
    const first = await openCounter(dataDir, clock);
    first.record(SCOPE, 'checkout', 'on');
    first.add(SCOPE, 'checkout', 'off', T0 - 5 * HOUR_MS, 7);
    await first.flush();
    first.record(SCOPE, 'checkout', 'on'); // not flushed: lost by a crash
    const second = await openCounter(dataDir, clock);
    const { series } = second.series({ scope: SCOPE, flagKey: 'checkout', period: '24h' });
    expect(series.at(-1)?.variations).toEqual({ on: 1 });
    expect(series.at(-6)?.variations).toEqual({ off: 7 });
  });

  it('never writes a count it could not read back: sums stop at the largest safe integer', async () => {
    const dataDir = await tempDir();
    const clock = { now: T0 };
    const first = await openCounter(dataDir, clock);
    first.add(SCOPE, 'checkout', 'on', T0, Number.MAX_SAFE_INTEGER);
    first.add(SCOPE, 'checkout', 'on', T0, Number.MAX_SAFE_INTEGER);
    first.add(SCOPE, 'checkout', 'off', T0, 5);
    await first.flush();
    first.add(SCOPE, 'checkout', 'on', T0, 1);
    await first.close();
    const before = lastHour(first)?.variations;
    const second = await openCounter(dataDir, clock);
    expect(before).toEqual({ on: Number.MAX_SAFE_INTEGER, off: 5 });
    expect(lastHour(second)?.variations).toEqual(before);
  });

  it('writes one line per (scope, flag, variation, hour) delta per flush', async () => {
    const dataDir = await tempDir();
    const counter = await openCounter(dataDir, { now: T0 });
    for (let i = 0; i < 100; i++) counter.record(SCOPE, 'checkout', i % 2 ? 'on' : 'off');
    await counter.flush();
    await counter.flush(); // nothing new: writes nothing
    const lines = (await readFile(logFile(dataDir), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { h: '2025-03-01T12:00:00.000Z', s: SCOPE, f: 'checkout', v: 'off', n: 50 },
      { h: '2025-03-01T12:00:00.000Z', s: SCOPE, f: 'checkout', v: 'on', n: 50 },
    ]);
  });

  it('close flushes every count, so a clean stop loses nothing', async () => {
    const dataDir = await tempDir();
    const clock = { now: T0 };
    const first = await EvaluationCounter.open({ state: await stateIn(dataDir), now: () => clock.now, every: manualTimer().every });
    first.record(SCOPE, 'checkout', 'on');
    await first.close();
    first.record(SCOPE, 'checkout', 'on'); // after close: ignored, not thrown
    const second = await openCounter(dataDir, clock);
    expect(lastHour(second)?.variations).toEqual({ on: 1 });
  });

  it('flushes on its timer, every 2 seconds by default, and stops the timer on close', async () => {
    const dataDir = await tempDir();
    const timer = manualTimer();
    const counter = await EvaluationCounter.open({ state: await stateIn(dataDir), now: () => T0, every: timer.every });
    expect(timer.scheduled.map((s) => s.ms)).toEqual([2000]);
    counter.record(SCOPE, 'checkout', 'on');
    timer.tick();
    await vi.waitFor(async () => expect(await readFile(logFile(dataDir), 'utf8')).toContain('"n":1'));
    await counter.close();
    expect(timer.scheduled[0].stopped).toBe(true);
  });

  it('ignores a torn last line and appends cleanly after it', async () => {
    const dataDir = await tempDir();
    await mkdir(path.join(dataDir, 'stats'), { recursive: true });
    const good = JSON.stringify({ h: '2025-03-01T12:00:00.000Z', s: SCOPE, f: 'checkout', v: 'on', n: 3 });
    await writeFile(logFile(dataDir), `${good}\n{"h":"2025-03-01T12:00:00.000Z","s":"acme/p1/prod","f":"chec`);
    const clock = { now: T0 };
    const first = await openCounter(dataDir, clock);
    expect(lastHour(first)?.variations).toEqual({ on: 3 });
    first.record(SCOPE, 'checkout', 'off');
    await first.flush();
    const second = await openCounter(dataDir, clock);
    expect(lastHour(second)?.variations).toEqual({ on: 3, off: 1 });
  });
});

describe('compaction', () => {
  it('rewrites a large log as one line per count, keeping the totals', async () => {
    const dataDir = await tempDir();
    const clock = { now: T0 };
    const first = await openCounter(dataDir, clock);
    for (let i = 0; i < 5; i++) {
      first.record(SCOPE, 'checkout', 'on');
      await first.flush();
    }
    expect((await readFile(logFile(dataDir), 'utf8')).trimEnd().split('\n')).toHaveLength(5);
    const second = await openCounter(dataDir, clock, { compactAboveBytes: 100 });
    expect((await readFile(logFile(dataDir), 'utf8')).trimEnd().split('\n')).toHaveLength(1);
    expect(lastHour(second)?.variations).toEqual({ on: 5 });
  });

  it('drops hours older than 30 days from memory and disk', async () => {
    const dataDir = await tempDir();
    await mkdir(path.join(dataDir, 'stats'), { recursive: true });
    const line = (h: string, n: number) => `${JSON.stringify({ h, s: SCOPE, f: 'checkout', v: 'on', n })}\n`;
    await writeFile(logFile(dataDir), line('2025-01-01T00:00:00.000Z', 9) + line('2025-02-28T00:00:00.000Z', 4));
    const counter = await openCounter(dataDir, { now: T0 });
    expect(await readFile(logFile(dataDir), 'utf8')).toBe(line('2025-02-28T00:00:00.000Z', 4));
    const total = counter
      .series({ scope: SCOPE, flagKey: 'checkout', period: '30d' })
      .series.reduce((sum, s) => sum + (s.variations.on ?? 0), 0);
    expect(total).toBe(4);
  });
});
