import { UsageError } from './command.js';

/**
 * `--upstream`: one control-plane origin or several, comma-separated, each http(s)://host[:port] (a path, query
 * or credentials would be dropped or leak into logs, so they are refused), none twice.
 */
export function parseUpstreamList(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') throw new UsageError(`--upstream ${EXPECTED}`);
  const origins: string[] = [];
  for (const entry of value.split(',').map((e) => e.trim())) {
    const origin = originOf(entry);
    if (origin === null) throw new UsageError(`--upstream: ${JSON.stringify(entry)} is not a control-plane origin; ${EXPECTED}`);
    if (origins.includes(origin)) throw new UsageError(`--upstream: ${origin} is listed twice`);
    origins.push(origin);
  }
  return origins;
}

const EXPECTED = 'takes control-plane origins, http(s)://host:port, separated by commas';

function originOf(entry: string): string | null {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return null;
  }
  const bare = url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && url.password === '';
  return (url.protocol === 'http:' || url.protocol === 'https:') && bare ? url.origin : null;
}
