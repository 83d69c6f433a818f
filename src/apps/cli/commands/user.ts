import path from 'node:path';
import { parseArgs } from 'node:util';
import { formatRole, parseRole } from '../../../foundations/auth/roles.js';
import { type ControlState, openControlState } from '../../../foundations/state/index.js';
import { readNewPassword } from '../../dashboard/users/read-password.js';
import { UserService } from '../../dashboard/users/user-service.js';
import { type CliIo, type Command, EXIT, UsageError } from '../command.js';

const help = `Usage: flagops user add --username <username> --name <full name> [--role <role>] [--org <org>] [--data-dir <dir>]

Creates a dashboard user who signs in with the username and a password. The password is read from stdin:
asked twice on a terminal, or the first line of what is piped in:

  printf '%s\\n' "$PASSWORD" | flagops user add --username alice --name "Alice Martin"

It is stored only as an scrypt hash in <data dir>/state/users.json. Admin keys can also create users with
POST /api/v1/users (docs/dashboard.md).

Options:
  --username <username>  what the person signs in with (letters, digits and . _ @ + -)
  --name <full name>     how the audit trail and commits name the person
  --role <role>          what the person may do (default admin): viewer (reads only), editor (what an agent
                         key may do) or admin, optionally limited to projects by slug: editor@shop,web
  --org <org>            the user's organisation (default: the only organisation of the data dir)
  --data-dir <dir>       the service's data directory (default: $FLAGOPS_DATA_DIR, else ./data)
  -h, --help             show this help
`;

/** The organisation to add the user to: the one named, or the only one there is. */
async function organisationOf(state: ControlState, dataDir: string, wanted: string | undefined): Promise<string> {
  const { organisations } = await state.keys.list();
  const names = organisations.map((o) => o.name);
  if (names.length === 0)
    throw new Error(`${dataDir} holds no organisation yet; start the service once on it (it creates one), then add users`);
  if (wanted !== undefined) {
    if (!names.includes(wanted)) throw new UsageError(`organisation ${wanted} does not exist in ${dataDir}; it has ${names.join(', ')}`);
    return wanted;
  }
  if (names.length > 1) throw new UsageError(`${dataDir} has several organisations (${names.join(', ')}); choose one with --org`);
  return names[0];
}

/** `flagops user add`, with the password source injected so tests need no terminal. */
export function createUserCommand(readPassword: (io: CliIo) => Promise<string>): Command {
  async function run(args: string[], io: CliIo): Promise<number> {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        username: { type: 'string' },
        name: { type: 'string' },
        role: { type: 'string' },
        org: { type: 'string' },
        'data-dir': { type: 'string' },
      },
    });
    if (positionals[0] !== 'add' || positionals.length > 1) throw new UsageError('expected the subcommand add');
    if (values.username === undefined) throw new UsageError('--username is required');
    if (values.name === undefined) throw new UsageError('--name is required');
    // Checked before the password is asked for, so a typo costs nothing.
    let role: string | undefined;
    try {
      role = values.role === undefined ? undefined : formatRole(parseRole(values.role, '--role'));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const dataDir = path.resolve(io.cwd, values['data-dir'] ?? io.env.FLAGOPS_DATA_DIR ?? 'data');
    // With FLAGOPS_DATABASE_URL, the users the service reads are in that database, not the data directory.
    const state = await openControlState({ dataDir, databaseUrl: io.env.FLAGOPS_DATABASE_URL || undefined, create: false });
    try {
      const org = await organisationOf(state, dataDir, values.org);
      const password = await readPassword(io);
      const users = await UserService.open({ state });
      const user = await users.create(org, { username: values.username, name: values.name, password, ...(role ? { role } : {}) });
      io.stdout(
        `created user ${user.username} (${user.name}) in organisation ${org} with role ${user.role ?? 'admin'}; they can sign in to the dashboard now\n`,
      );
      return EXIT.ok;
    } finally {
      await state.close();
    }
  }
  return { name: 'user', summary: 'add a dashboard user (the password is read from stdin)', help, run };
}

export const userCommand = createUserCommand(() => readNewPassword(process.stdin, process.stderr));
