/** What the cluster tests ask of a control plane, a replica and the git host, in the words of the tests. */
import { until } from '../helpers/deadlines.js';
import { git } from '../helpers/git-cli.js';
import { httpClient, type Json } from '../helpers/http-client.js';

/** The contract's bound for what one control plane does to reach the others (keys, changes, kills). */
export const WITHIN_A_SECOND = 1_000;

/** One flag's evaluation on an evaluation port or a replica, `undefined` when not answered 200. */
export async function evaluateOn(url: string, sdkKey: string, flagKey: string): Promise<Json | undefined> {
  const res = await httpClient(url, sdkKey).post('/v1/evaluate', { key: flagKey, context: { userId: 'u1' } });
  return res.status === 200 ? res.body[flagKey] : undefined;
}

/** Resolves once every one of `urls` (evaluation ports, replicas) answers `flagKey` with a result `check` accepts. */
export function servedOnAll(urls: readonly string[], sdkKey: string, flagKey: string, check: (result: Json) => boolean) {
  return Promise.all(
    urls.map((url) =>
      until(
        () => evaluateOn(url, sdkKey, flagKey),
        (result) => result !== undefined && check(result),
      ),
    ),
  );
}

/** The status an evaluation port or replica answers an sdk key with. */
export async function evaluationStatus(url: string, sdkKey: string): Promise<number> {
  return (await httpClient(url, sdkKey).post('/v1/evaluate', { key: 'none', context: {} })).status;
}

/** `<action> <flag> <environment>` of each commit on the git host's main with a Flagops-Action trailer, oldest first. */
export function hostActions(gitdir: string): string[] {
  const format = ['Action', 'Flag', 'Environment'].map((key) => `%(trailers:key=Flagops-${key},valueonly,separator=)`).join('%x20');
  return git(gitdir, 'log', '--reverse', `--format=${format}`, 'main')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

/** A file of the git host's main, or null when main has none at that path. */
export function hostFile(gitdir: string, file: string): string | null {
  try {
    return git(gitdir, 'show', `main:${file}`);
  } catch {
    return null;
  }
}

/** Every evaluation counted in a flag's environment over the last day, whatever the variation. */
export async function countedEvaluations(controlUrl: string, adminKey: string, flagId: string, env: string): Promise<number> {
  const stats = (await httpClient(controlUrl, adminKey).get(`/api/v1/flags/${flagId}/environments/${env}/stats?period=24h`)).body;
  return stats.series.reduce(
    (sum: number, hour: Json) => sum + Object.values(hour.variations as Record<string, number>).reduce((a, b) => a + b, 0),
    0,
  );
}
