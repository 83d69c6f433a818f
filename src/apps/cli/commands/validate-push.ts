import { readFileSync } from 'node:fs';
import { readPushContext } from '../../git-http/pre-receive-hook.js';
import { checkPush, parseRefUpdates } from '../../git-http/push-check.js';
import { type CliIo, type Command, EXIT, UsageError } from '../command.js';

const help = `Usage: flagops validate-push

A git pre-receive hook: reads "<old> <new> <ref>" lines on stdin and refuses the push (exit 1) unless it moves
main forward, brings no invalid file (an issue in a file it adds or changes, or one main did not have; an
invalid file already on main that it leaves as it was refuses nothing but a change, kills aside, to the flag
or project it holds back), and its commits have no file over
1 MiB, no symbolic link and no submodule. Refusals are printed one per line on stderr, saying what and where (file, commit), which
git shows the pusher. The flagops control plane installs it in each repository it serves over HTTP, where it
also holds the push to the pushing key's permissions and refuses Flagops-* trailers (but those of the
service's own commit at the head of an open proposal branch, which a merge or fast-forward brings) and files
outside projects/; a self-hosted git server can run it as its pre-receive hook too, where it checks main and takes
other branches (pull requests, and the service's proposal branches in remote mode) as they are.
`;

async function run(args: string[], io: CliIo): Promise<number> {
  if (args.length > 0) throw new UsageError('validate-push takes no arguments; it reads ref updates on stdin');
  // Read fd 0 synchronously: git writes every ref line and closes the pipe before waiting on the hook, and a
  // stdin stream that has ended leaves nothing to keep node alive under some loaders (vite-node in tests).
  const problems = await checkPush(parseRefUpdates(readFileSync(0, 'utf8')), readPushContext(process.env));
  if (problems.length === 0) return EXIT.ok;
  io.stderr(`flagops: push refused\n${problems.map((p) => `${p}\n`).join('')}`);
  return EXIT.failed;
}

export const validatePushCommand: Command = { name: 'validate-push', summary: 'check a push as a git pre-receive hook', help, run };
