import { readFileSync } from 'node:fs';
import { type CliIo, type Command, EXIT, UsageError } from './command.js';
import { diffCommand } from './commands/diff.js';
import { evalCommand } from './commands/eval.js';
import { generateCommand } from './commands/generate.js';
import { importCommand } from './commands/import.js';
import { refsCommand } from './commands/refs.js';
import { userCommand } from './commands/user.js';
import { validateCommand } from './commands/validate.js';
import { validatePushCommand } from './commands/validate-push.js';

/** The subcommands, in the order `flagops --help` lists them. Add one here to add `flagops <name>`. */
export const commands: readonly Command[] = [
  validateCommand,
  diffCommand,
  importCommand,
  userCommand,
  validatePushCommand,
  evalCommand,
  generateCommand,
  refsCommand,
];

function usage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `Usage: flagops <command> [options]

Commands:
${lines.join('\n')}

Run 'flagops <command> --help' for a command's options. 'flagops --version' prints the version.
`;
}

function version(): string {
  // package.json is three levels above both src/apps/cli and dist/apps/cli.
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

const wantsHelp = (args: readonly string[]) => args.includes('--help') || args.includes('-h');

/** Runs `flagops <argv…>` and resolves to the exit code; never calls process.exit, so tests run it in-process. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined) {
    io.stderr(usage());
    return EXIT.usage;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? commands.find((c) => c.name === args[0]) : undefined;
    io.stdout(topic ? topic.help : usage());
    return EXIT.ok;
  }
  if (name === '--version' || name === '-v') {
    io.stdout(`${version()}\n`);
    return EXIT.ok;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr(`flagops: unknown command "${name}"\n\n${usage()}`);
    return EXIT.usage;
  }
  if (wantsHelp(args)) {
    io.stdout(command.help);
    return EXIT.ok;
  }
  try {
    return await command.run(args, io);
  } catch (err) {
    // parseArgs throws TypeErrors with a code for unknown or malformed options.
    const code = (err as { code?: string }).code;
    if (err instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
      io.stderr(`flagops ${name}: ${(err as Error).message}\n\n${command.help}`);
      return EXIT.usage;
    }
    io.stderr(`flagops ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.failed;
  }
}
