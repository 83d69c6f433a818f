/**
 * The head of a CGI response (RFC 3875 §6), as `git http-backend` writes it: header lines up to a blank
 * line; `Status:` sets the HTTP status. Read by the service (streamed responses) and by the git runner
 * (responses it writes to a handed-off connection itself).
 */
export interface CgiHead {
  status: number;
  headers: Array<[string, string]>;
}

/** Finds the end of the CGI head in `buffer`: the index where the body starts, or -1 when not there yet. */
export function cgiHeadEnd(buffer: Buffer): number {
  const crlf = buffer.indexOf('\r\n\r\n');
  const lf = buffer.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return crlf + 4;
  return lf >= 0 ? lf + 2 : -1;
}

export function parseCgiHead(text: string): CgiHead {
  let status = 200;
  const headers: Array<[string, string]> = [];
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else headers.push([name, value]);
  }
  return { status, headers };
}
