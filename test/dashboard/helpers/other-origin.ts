import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A page on another loopback port: the same *site* as the dashboard (ports do not count for SameSite, so the
 * browser sends the Strict cookie along) but another *origin*. Its script fires a no-cors POST at `target`,
 * the kind of request a hostile page can make without any CORS permission.
 */
export async function startOtherOrigin(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const page = `<!doctype html><title>other origin</title><script>
fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', credentials: 'include' })
  .then(() => { document.title = 'sent'; }, () => { document.title = 'failed'; });
</script>`;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
