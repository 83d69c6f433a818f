import net from 'node:net';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { listen } from '../../src/foundations/http/serve.js';

/** A raw connection with everything it received and when it closed. */
async function connect(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  const state = { received: '', closed: false };
  socket.on('data', (chunk) => {
    state.received += String(chunk);
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      state.closed = true;
      resolve();
    }),
  );
  await new Promise((resolve) => socket.once('connect', resolve));
  return { socket, state, closed };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server whose /held answers only once `release` is called; every other path answers at once. */
async function heldServer() {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrived = 0;
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.path === '/held') {
      arrived++;
      await released;
    }
    ctx.body = { path: ctx.path };
  });
  const server = await listen(app, '127.0.0.1', 0);
  return { server, release, arrived: () => arrived };
}

describe('a server being stopped', () => {
  it('answers the requests in flight, with Connection: close, and resolves once they are answered', async () => {
    const { server, release, arrived } = await heldServer();
    const held = await connect(server.port);
    held.socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    while (arrived() === 0) await sleep(5);
    const idle = await connect(server.port);
    idle.socket.write('GET /other HTTP/1.1\r\nHost: x\r\n\r\n');
    while (!idle.state.received.includes('"/other"')) await sleep(5);

    let stopped = false;
    const closing = server.close(30_000).then(() => {
      stopped = true;
    });
    await idle.closed; // a kept-alive connection with nothing in flight is closed at once
    await sleep(100);
    expect(stopped).toBe(false);
    expect(held.state.closed).toBe(false);
    release();
    await closing;
    await held.closed;
    expect(held.state.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(held.state.received).toContain('Connection: close\r\n');
    expect(held.state.received).toContain('{"path":"/held"}');
  });

  it('answers 503 unavailable with Connection: close to a request that arrives on an open connection once the stop began', async () => {
    const { server, release, arrived } = await heldServer();
    const held = await connect(server.port);
    held.socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    while (arrived() === 0) await sleep(5);
    // Half a request when the stop begins: the connection is not idle, and the request is whole only after.
    const late = await connect(server.port);
    late.socket.write('POST /write HTTP/1.1\r\nHost: x\r\n');
    await sleep(50);

    const closing = server.close(30_000);
    await sleep(50);
    late.socket.write('Content-Length: 0\r\n\r\n');
    await late.closed;
    expect(late.state.received).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(late.state.received).toContain('Connection: close\r\n');
    expect(late.state.received).toContain('Retry-After: 1\r\n');
    const body = JSON.parse(late.state.received.slice(late.state.received.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ error: { code: 'unavailable', message: expect.stringContaining('the service is stopping') } });
    release();
    await closing;
  });

  it('cuts off what is still unanswered once the drain time is up', async () => {
    const { server, arrived } = await heldServer();
    const held = await connect(server.port);
    held.socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    while (arrived() === 0) await sleep(5);
    const started = Date.now();
    await server.close(300);
    await held.closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(held.state.received).toBe('');
  });
});
