import { type FlagStatus, leastStale, type StatusOf } from './flag-status.js';

/** The control plane the health comes from, and the key that reads it. */
export interface HealthSource {
  url: string;
  key: string;
}

/** A control plane that could not give the health: said in words, with what it answered. */
export class HealthUnavailableError extends Error {}

interface HealthAnswer {
  flags: Array<{ key: string; status: FlagStatus }>;
}

/**
 * Each flag's status as the service's flag health reports it (`GET /api/v1/projects/:id/flags/health`): the
 * served history in git and the evaluation counts, which a checkout alone cannot know. Archived flags are not
 * in it; they stay stale, as `archived` says.
 */
export async function serviceStatusOf(
  source: HealthSource,
  projectSlug: string | undefined,
  archived: ReadonlySet<string>,
): Promise<StatusOf> {
  const { projects } = await getJson<{ projects: Array<{ id: string; slug: string }> }>(source, '/api/v1/projects');
  const chosen = projects.filter((p) => projectSlug === undefined || p.slug === projectSlug);
  if (projectSlug !== undefined && chosen.length === 0)
    throw new HealthUnavailableError(`${source.url} has no project ${projectSlug} that this key can read`);
  const statuses: Array<{ key: string; status: FlagStatus }> = [];
  for (const project of chosen) {
    const health = await getJson<HealthAnswer>(source, `/api/v1/projects/${encodeURIComponent(project.id)}/flags/health`);
    for (const flag of health.flags) statuses.push({ key: flag.key, status: flag.status });
  }
  const fromService = leastStale(statuses, 'active');
  const reported = new Set(statuses.map((s) => s.key));
  return (key) => (archived.has(key) && !reported.has(key) ? 'stale' : fromService(key));
}

async function getJson<T>(source: HealthSource, path: string): Promise<T> {
  const url = new URL(path, source.url.endsWith('/') ? source.url : `${source.url}/`);
  let res: Response;
  try {
    res = await fetch(url, { headers: { authorization: `Bearer ${source.key}`, accept: 'application/json' } });
  } catch (err) {
    throw new HealthUnavailableError(`could not reach ${url.origin}: ${(err as Error).cause ?? (err as Error).message}`);
  }
  const text = await res.text();
  if (!res.ok) {
    let message = text.slice(0, 200);
    try {
      message = JSON.parse(text).error?.message ?? message;
    } catch {}
    throw new HealthUnavailableError(`${url.origin}${url.pathname} answered ${res.status}: ${message}`);
  }
  return JSON.parse(text) as T;
}
