#!/usr/bin/env node
import { startMcp } from './run.js';
import type { RunningMcp } from './transports.js';

// The `flagops-mcp` bin. Everything but process wiring lives in run.ts.

let running: RunningMcp | undefined;
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  // Exit explicitly: idle keep-alive sockets to the control plane must not keep a finished server alive.
  void (running?.close() ?? Promise.resolve()).finally(() => process.exit(0));
};
// Installed before anything is served, so a signal right after the "listening" log still stops cleanly.
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

const outcome = await startMcp(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  onEnded: stop,
});

if ('exitCode' in outcome) {
  process.exitCode = outcome.exitCode;
} else {
  running = outcome.running;
}
