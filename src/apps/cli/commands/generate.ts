import { stat, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileSystemFault } from '../../../foundations/errors/file-system-fault.js';
import { readRepositoryFiles } from '../../../foundations/repository/read-repository.js';
import { type CliIo, type Command, EXIT, UsageError } from '../command.js';
import { accessorProject } from '../generate/accessor-model.js';
import { emitGo } from '../generate/emit-go.js';
import { emitPython } from '../generate/emit-python.js';
import { emitTypeScript } from '../generate/emit-typescript.js';
import { readRepositoryDirectory } from '../read-directory.js';

const LANGUAGES = ['ts', 'go', 'python'] as const;
type Language = (typeof LANGUAGES)[number];

const help = `Usage: flagops generate --lang ts|go|python --project <slug> [--dir <flags repository>] [--out <file>]

Writes typed accessors for a project's flags, for the SDK of the language: one method per flag, typed from
the flag's kind (boolean, string, number, json), with the flag's defaultValue as the value served when the
flag cannot be evaluated, and its name and description as the doc comment. Generate again when flags are
added or their kind or default changes.

  ts      a class ShopFlags for @flagops/sdk:     new ShopFlags(createClient({ evalUrl, sdkKey })).checkoutV2(context)
  go      a type ShopFlags for the Go SDK:        ShopFlags{Client: client}.CheckoutV2(ctx)
  python  a class ShopFlags for the Python SDK:   ShopFlags(Client(eval_url, sdk_key)).checkout_v2(context)

Every valid key gets a method. A name that is a keyword or one of the class's own members gets a trailing _
(the flag client is read with client_, Client_ in Go), and keys giving the same name get _2, _3... after it,
the first in key order keeping it (a-b → aB, a.b → aB_2). Each method's doc comment names its flag's key.

Options:
  --lang ts|go|python  the language to write
  --project slug       the project whose flags to write
  --dir dir            the flags repository's root directory (default: the current directory)
  --out file           the file to write (default: standard output)
  --package name       Go only: the package the file belongs to (default: flags)
  -h, --help           show this help

Exit code 0 when written, 1 when the repository has no such project or its flags have issues
('flagops validate' names them).
`;

async function run(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      lang: { type: 'string' },
      project: { type: 'string' },
      dir: { type: 'string', default: '.' },
      out: { type: 'string' },
      package: { type: 'string', default: 'flags' },
    },
  });
  const lang = values.lang as Language | undefined;
  if (lang === undefined || !LANGUAGES.includes(lang)) throw new UsageError(`--lang must be one of ${LANGUAGES.join(', ')}`);
  if (!values.project) throw new UsageError('--project is required');
  if (!/^[a-z_][a-z0-9_]*$/.test(values.package)) throw new UsageError('--package must be a lower-case Go package name');

  const root = resolve(io.cwd, values.dir);
  const isDir = await stat(root).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) {
    io.stderr(`flagops generate: --dir ${values.dir} is not a directory that can be read; give the flags repository's root\n`);
    return EXIT.failed;
  }
  const files = await readRepositoryDirectory(root);
  if (!files) {
    io.stderr(`flagops generate: ${values.dir} has no projects/ folder; is it the root of a flags repository?\n`);
    return EXIT.failed;
  }
  const { state, issues } = readRepositoryFiles(files, null, { locate: true });
  const mine = issues.filter((issue) => issue.file?.startsWith(`projects/${values.project}/`));
  if (mine.length > 0) {
    io.stderr(`flagops generate: project ${values.project} has ${mine.length} issue(s); run 'flagops validate' to see them\n`);
    return EXIT.failed;
  }
  const project = state.projects.get(values.project);
  if (!project) {
    io.stderr(`flagops generate: ${values.dir} has no project ${values.project}\n`);
    return EXIT.failed;
  }
  const model = accessorProject(values.project, project);
  const code = lang === 'ts' ? emitTypeScript(model) : lang === 'go' ? emitGo(model, values.package) : emitPython(model);
  if (values.out === undefined) io.stdout(code);
  else {
    const written = await writeFile(resolve(io.cwd, values.out), code).then(
      () => null,
      (err: NodeJS.ErrnoException) => outFault(values.out!, err),
    );
    if (written !== null) {
      io.stderr(`flagops generate: ${written}; nothing was written\n`);
      return EXIT.failed;
    }
    io.stderr(`flagops generate: wrote ${model.flags.length} accessor(s) to ${values.out}\n`);
  }
  return EXIT.ok;
}

/** Why `--out` could not be written, in words naming the option and what to give instead. */
function outFault(out: string, err: NodeJS.ErrnoException): string {
  if (err.code === 'EISDIR') return `--out ${out} is a directory; give the path of a file to write`;
  if (err.code === 'ENOENT' || err.code === 'ENOTDIR')
    return `--out ${out}: its folder does not exist; make it first, or give another path`;
  const fault = fileSystemFault(err);
  return `--out ${out} cannot be written: ${fault?.message ?? err.code ?? err.message}`;
}

export const generateCommand: Command = {
  name: 'generate',
  summary: "write typed accessors for a project's flags (TypeScript, Go, Python)",
  help,
  run,
};
