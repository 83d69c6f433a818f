// A control plane's state that takes the turn `writes` and keeps it: a test stops this process (SIGSTOP) to see
// the turn pass on while its connection stays open.  node turn-holder.js <database url>
import { openControlState } from '../../src/foundations/state/index.js';

const state = await openControlState({ dataDir: '/nonexistent', databaseUrl: process.argv[2] });
await state.takeTurn('writes', 5_000);
process.stdout.write('held\n');
setInterval(() => {}, 60_000);
