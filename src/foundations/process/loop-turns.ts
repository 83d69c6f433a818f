import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long synchronous work may run before the event loop gets a turn. */
const SLICE_MS = 5;

let sliceStart = performance.now();

/**
 * Gives the event loop a turn once the current slice of work has run SLICE_MS. Reads of git objects and parses
 * are synchronous, and a long read of them (a history walk, a tree of thousands of files) is a chain of promises
 * that settle without I/O: without turns it would hold every evaluation and kill of this process until done.
 * One slice for the whole process, as the event loop is one.
 */
export async function loopTurn(): Promise<void> {
  while (performance.now() - sliceStart >= SLICE_MS) {
    const queuedAt = performance.now();
    await nextTurn();
    // The first to resume after the event loop ran starts the next slice. The others resuming in that same turn
    // wait for a later one: each resuming with a slice of its own would hold the loop for all of theirs.
    if (sliceStart < queuedAt) sliceStart = performance.now();
  }
}
