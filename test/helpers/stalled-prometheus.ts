import http from 'node:http';

/**
 * A Prometheus that stopped answering, over the real HTTP API: `vector(0)` is answered with 0 at once, every
 * other query is held until the test answers it (as Prometheus unavailable).
 */
export class StalledPrometheus {
  readonly held: http.ServerResponse[] = [];
  /** The most queries held at once since the last reset. */
  maxHeld = 0;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<StalledPrometheus> {
    let stub: StalledPrometheus | undefined;
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => stub?.answer(new URLSearchParams(body).get('query'), res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stub = new StalledPrometheus(server, `http://127.0.0.1:${(server.address() as { port: number }).port}`);
    return stub;
  }

  private answer(query: string | null, res: http.ServerResponse): void {
    if (query === 'vector(0)') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [Date.now() / 1000, '0'] }] } }),
      );
      return;
    }
    this.held.push(res);
    this.maxHeld = Math.max(this.maxHeld, this.held.length);
    // A query the service gave up on (its timeout) is no longer held.
    res.on('close', () => this.held.includes(res) && this.held.splice(this.held.indexOf(res), 1));
  }

  /** Answers the oldest held queries with an error; how many it answered. */
  fail(count = this.held.length): number {
    const answered = this.held.splice(0, count);
    for (const res of answered) {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'error', errorType: 'unavailable', error: 'stalled' }));
    }
    return answered.length;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
