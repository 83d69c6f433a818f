#!/usr/bin/env node
import { processIo } from './command.js';
import { run } from './run.js';

// Whoever reads the output stopped reading (`flagops diff | head -1`): what is left to print has nobody to read
// it, so stop quietly, as a program ended by SIGPIPE would, rather than with a stack trace. Other write errors
// are still thrown.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(0);
});

// The `flagops` bin: everything lives in run.ts so tests can call it in-process.
process.exitCode = await run(process.argv.slice(2), processIo);
