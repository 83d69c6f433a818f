/** Whether an If-None-Match header names this ETag (a list, weak validators and `*` included; RFC 9110 §13.1.2). */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true;
  for (const raw of header.split(',')) {
    const token = raw.trim();
    if (token === '*' || token === etag || (token.startsWith('W/') && token.slice(2) === etag)) return true;
  }
  return false;
}
