import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Ports below this are left to well-known services and to what people run by hand. */
const LOWEST = 10_000;

/**
 * The first port the system hands out by itself (for `listen(0)` and outgoing connections), or null where that
 * cannot be read (not Linux).
 */
function firstEphemeralPort() {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST + 1_000 ? low : null;
  } catch {
    return null;
  }
}

function listenOnce(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: taken } = server.address();
      server.close(() => resolve(taken));
    });
  });
}

/**
 * A free loopback port for a server a test starts, stops and starts again on the same port (a git host, a
 * database, a control plane or a process given its port). It is taken below the range the system hands out:
 * in that range, another test file running at the same time can be given the port by the system (for its own
 * server, or for an outgoing connection) while the server is down, and the server cannot come back
 * (EADDRINUSE). Where that range is unknown, any free port.
 */
export async function freePort() {
  const high = firstEphemeralPort();
  if (high === null) return listenOnce(0);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (high - LOWEST));
    try {
      return await listenOnce(port);
    } catch (err) {
      if (err.code !== 'EADDRINUSE' && err.code !== 'EACCES') throw err;
    }
  }
  return listenOnce(0);
}
