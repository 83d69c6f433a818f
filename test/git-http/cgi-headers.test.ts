import { describe, expect, it } from 'vitest';
import { cgiHeadEnd, parseCgiHead } from '../../src/apps/git-http/cgi-head.js';

describe('the CGI response head of git http-backend', () => {
  it('ends at the first blank line, with CRLF or LF line ends', () => {
    expect(cgiHeadEnd(Buffer.from('Content-Type: x\r\n\r\nbody'))).toBe(19);
    expect(cgiHeadEnd(Buffer.from('Content-Type: x\n\nbody'))).toBe(17);
    expect(cgiHeadEnd(Buffer.from('Content-Type: x\r\n'))).toBe(-1);
  });

  it('takes Status as the HTTP status and keeps the other headers in order', () => {
    expect(parseCgiHead('Status: 403 Forbidden\r\nContent-Type: text/plain\r\nExpires: Fri, 01 Jan 1980 00:00:00 GMT\r\n')).toEqual({
      status: 403,
      headers: [
        ['Content-Type', 'text/plain'],
        ['Expires', 'Fri, 01 Jan 1980 00:00:00 GMT'],
      ],
    });
    expect(parseCgiHead('Content-Type: application/x-git-upload-pack-result\n').status).toBe(200);
  });
});
