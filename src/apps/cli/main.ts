#!/usr/bin/env node
import { processIo } from './command.js';
import { run } from './run.js';

// The `flagops` bin: everything lives in run.ts so tests can call it in-process.
process.exitCode = await run(process.argv.slice(2), processIo);
