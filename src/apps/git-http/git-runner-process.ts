import net from 'node:net';
import { answerHandedOff } from './handed-off-response.js';
import {
  encodeFrame,
  FRAME_EXIT,
  FRAME_STDERR,
  FRAME_STDOUT,
  type HandOffMessage,
  type HandOffReport,
  MAX_REQUEST_LINE,
  type RunRequest,
  type StopMessage,
} from './runner-protocol.js';
import { spawnGit, stopGit } from './spawn-git.js';

/**
 * The git runner: a small process that starts git processes for the service (git-runner.ts explains why)
 * and relays their input and output over a Unix socket. Clones and fetches come another way: the service
 * hands the client's connection itself over the Node IPC channel, and the runner writes the answer to it
 * (handed-off-response.ts), so the pack data never passes through the service. Started at the lowest
 * priority, so every git it starts runs there too. Exits when the service closes its standard input or the
 * IPC channel (or dies).
 *
 *   node git-runner-process.js <socket path>     prints "ready" once it listens
 */

function serve(connection: net.Socket): void {
  let header = Buffer.alloc(0);
  connection.on('error', () => {});
  const onData = (chunk: Buffer) => {
    header = Buffer.concat([header, chunk]);
    const eol = header.indexOf(0x0a);
    if (eol < 0) {
      if (header.length > MAX_REQUEST_LINE) connection.destroy();
      return;
    }
    connection.off('data', onData);
    connection.pause();
    run(connection, JSON.parse(header.subarray(0, eol).toString('utf8')) as RunRequest, header.subarray(eol + 1));
  };
  connection.on('data', onData);
}

function run(connection: net.Socket, request: RunRequest, firstInput: Buffer): void {
  const child = spawnGit(request.args, request.env, false);
  let exited = false;
  child.stdin.on('error', () => {}); // git may exit before reading all of its input
  if (firstInput.length > 0) child.stdin.write(firstInput);
  connection.pipe(child.stdin);

  let waiting = false;
  const send = (type: number, data: Buffer) => {
    if (connection.write(encodeFrame(type, data)) || waiting) return;
    waiting = true;
    child.stdout.pause();
    child.stderr.pause();
    connection.once('drain', () => {
      waiting = false;
      child.stdout.resume();
      child.stderr.resume();
    });
  };
  child.stdout.on('data', (data: Buffer) => send(FRAME_STDOUT, data));
  child.stderr.on('data', (data: Buffer) => send(FRAME_STDERR, data));
  child.on('error', (err) => {
    exited = true;
    connection.end(encodeFrame(FRAME_EXIT, JSON.stringify({ code: null, signal: null, error: err.message })));
  });
  child.on('close', (code, signal) => {
    exited = true;
    connection.end(encodeFrame(FRAME_EXIT, JSON.stringify({ code, signal })));
  });
  // The service went away from this request (its client did): stop git and its children.
  connection.on('close', () => {
    if (!exited) stopGit(child);
  });
  // The service's side ended: all of git's input is sent (it half-closes), or it went away and closed the
  // connection, which reads the same. A write tells them apart: to a closed connection it fails, and the close
  // that follows stops git. Otherwise git http-backend, its input short of the length it was told, waits for
  // the rest for good (git 2.39 at full CPU). An empty stderr frame adds nothing to what git says.
  connection.once('end', () => {
    if (!exited) connection.write(encodeFrame(FRAME_STDERR, Buffer.alloc(0)));
  });
}

const socketPath = process.argv[2];
if (!socketPath) {
  process.stderr.write('usage: git-runner-process <socket path>\n');
  process.exit(2);
}
/** The handed-off requests being answered: each one's function that ends it now. */
const answering = new Set<() => void>();
let grace: NodeJS.Timeout | undefined;
let graceOver = false;

process.on('message', (message: HandOffMessage | StopMessage, connection?: net.Socket) => {
  if (message.type === 'stop') {
    // The service is stopping: what is being answered may finish within the grace period, then it ends.
    grace ??= setTimeout(() => {
      graceOver = true;
      for (const end of answering) end();
    }, message.graceMs);
    grace.unref();
    return;
  }
  if (!connection) {
    // The client's socket closed before it could be sent: there is nobody to answer.
    const report: HandOffReport = {
      type: 'served',
      id: message.id,
      status: 0,
      code: null,
      signal: null,
      bytes: 0,
      stderr: '',
      clientGone: true,
    };
    tell(report);
    return;
  }
  const end = answerHandedOff(connection, message, (report) => {
    answering.delete(end);
    tell(report);
  });
  answering.add(end);
  if (graceOver) end();
});

/** Reports to the service; one that has gone (its channel closed) needs no report. */
function tell(report: HandOffReport): void {
  process.send?.(report, undefined, undefined, () => {});
}

const server = net.createServer({ allowHalfOpen: true }, serve);
server.listen(socketPath, () => process.stdout.write('ready\n'));
// A service that failed to start, or was killed, may exit before "ready" is written: then the write fails with
// EPIPE, and there is nobody left to serve. Exit quietly rather than with a stack trace on the service's terminal.
process.stdout.on('error', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
process.on('disconnect', () => process.exit(0));
// The service decides when this stops (a stop message, then its channels close): a signal meant for the
// service alone, sent to its whole process group, must not cut the clones being answered.
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => {});
