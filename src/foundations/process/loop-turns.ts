/** How long synchronous work may run before the event loop gets a turn. */
const SLICE_MS = 5;

let sliceStart = performance.now();
/** Walks waiting for a slice, in the order they asked: one resumes per turn of the event loop. */
const waiting: Array<() => void> = [];
let scheduled = false;

/**
 * Gives the event loop a turn once the current slice of work has run SLICE_MS. Reads of git objects and parses
 * are synchronous, and a long read of them (a history walk, a tree of thousands of files) is a chain of promises
 * that settle without I/O: without turns it would hold every evaluation and kill of this process until done.
 * One slice per turn of the event loop for the whole process, given to the walks in turn, so several walks
 * under way (a push's commits described eight at a time) hold the loop no longer than one, and none waits for
 * another to finish.
 */
export function loopTurn(): Promise<void> {
  if (performance.now() - sliceStart < SLICE_MS) return Promise.resolve();
  return new Promise((resolve) => {
    waiting.push(resolve);
    schedule();
  });
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(nextSlice);
}

function nextSlice(): void {
  scheduled = false;
  const next = waiting.shift();
  if (next === undefined) return;
  sliceStart = performance.now();
  next();
  if (waiting.length > 0) schedule();
}
