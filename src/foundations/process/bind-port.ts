import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import { type FastPath, listen, type RunningServer, type ServerIdentity } from '../http/serve.js';
import { StartupError } from './startup-error.js';

/** The settings that choose a port and its address, named in the message when it cannot be had. */
export interface PortSettings {
  port: string;
  host: string;
}

/** A port taken before the app that serves it exists: it answers 503 until `serve` hands it the app. */
export interface BoundPort {
  running: RunningServer;
  serve(app: Koa, fastPath?: FastPath): void;
}

/**
 * Listens on host:port first thing, so that a port in use stops the start before anything is written,
 * with a message naming the setting to change instead of a stack trace.
 */
export async function bindPort(host: string, port: number, settings: PortSettings, identity: ServerIdentity): Promise<BoundPort> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const gate: FastPath = (req, res) => {
    if (handler) handler(req, res);
    else answerStarting(req, res);
    return true;
  };
  let running: RunningServer;
  try {
    running = await listen(new Koa(), host, port, gate, identity);
  } catch (err) {
    throw portError(err as NodeJS.ErrnoException, host, port, settings);
  }
  return {
    running,
    serve(app, fastPath) {
      const callback = app.callback();
      handler = fastPath ? (req, res) => fastPath(req, res) || callback(req, res) : callback;
    },
  };
}

function answerStarting(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  const body =
    path === '/healthz'
      ? { status: 'starting' }
      : { error: { code: 'unavailable', message: 'the service is starting; try again shortly' } };
  res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Retry-After': '1' });
  res.end(JSON.stringify(body));
}

function portError(err: NodeJS.ErrnoException, host: string, port: number, settings: PortSettings): Error {
  switch (err.code) {
    case 'EADDRINUSE':
      return new StartupError(`port ${port} on ${host} is in use; stop what uses it, or set ${settings.port} to a free port`);
    case 'EACCES':
      return new StartupError(
        `not allowed to listen on port ${port} on ${host}; set ${settings.port} to a port this user may open (above 1023)`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(
        `cannot listen on ${host}: it is not an address of this machine; set ${settings.host} to one that is (default 127.0.0.1)`,
      );
    default:
      return err;
  }
}
