// `flagops refs` over a large source tree: a temp dir of 100,000 files in mixed languages (TypeScript,
// JavaScript, Go, Python, Markdown, JSON), of which some sit in node_modules/ and vendor/ directories, some are
// ignored by .gitignore files (build output, logs, a nested .gitignore) and some are binary, with a flags
// repository of 1,000 flags beside it. The CLI runs as a user runs it (a new process, JSON to a file), first
// once to warm the page cache, then BENCH_RUNS times: the median and slowest wall-clock time, and the median CPU
// time (user + system), which other work on the machine moves less. As a yardstick
// for the I/O alone, `grep -rIF` for the same keys over the same tree (which knows nothing of .gitignore).
//
//   npm run build && npm run bench -- refs
//
// BENCH_FILES (default 100000), BENCH_FLAGS (1000), BENCH_RUNS (5), BENCH_KEEP=1 keeps the tree (its path is
// printed), BENCH_TREE=<that path> scans it again without generating it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, '../../dist/apps/cli/main.js');
const totalFiles = Number(process.env.BENCH_FILES ?? 100_000);
const flagCount = Number(process.env.BENCH_FLAGS ?? 1000);
const runs = Number(process.env.BENCH_RUNS ?? 5);

/** BENCH_TREE: a tree kept by an earlier run (BENCH_KEEP=1), scanned again without generating it. */
const reused = process.env.BENCH_TREE;
const root = reused ?? mkdtempSync(path.join(tmpdir(), 'flagops-bench-refs-'));
const tree = path.join(root, 'src-tree');
const flagsRepo = path.join(root, 'flags');

// A fixed pseudo-random sequence, so every run scans the same tree.
let seed = 42;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const pick = (n) => Math.floor(random() * n);
const flagKey = (i) => `team-${i % 20}-feature-${i}`;
/** One key in 200 is not a flag: what an unknown key in a pull request looks like. */
const someKey = () => (random() < 0.005 ? `missing-${pick(50)}` : flagKey(pick(flagCount)));

const FILLER = [
  'const total = items.reduce((sum, item) => sum + item.price * item.quantity, 0);',
  '// Keep the order of the steps: the payment provider expects the address first.',
  'if (user.country === "DE" && cart.size > 3) return applyDiscount(cart, 0.1);',
  'logger.info("request handled", { status: response.status, ms: Date.now() - started });',
  'export function normalize(value) { return String(value).trim().toLowerCase(); }',
];

const SOURCES = {
  ts: (key) =>
    `import { client } from './flags';\n${FILLER.join('\n')}\nif (client.boolean('${key}', false, { userId })) {\n  render();\n}\n`,
  js: (key) =>
    `const { getBooleanValue } = require('./of');\n${FILLER.join('\n')}\nconst on = await ofClient.getBooleanValue("${key}", false);\n`,
  go: (key) =>
    `package handlers\n\nimport "context"\n\n// ${FILLER[1]}\nfunc Handle(ctx context.Context) bool {\n\treturn client.Bool("${key}", false, flagops.Context{UserID: "u"})\n}\n`,
  py: (key) =>
    `from app.flags import client\n\n# ${FILLER[1]}\ndef handle(user):\n    return client.boolean("${key}", False, {"userId": user.id})\n`,
  md: (key) => `# Notes\n\nThe \`${key}\` flag guards the new flow.\n\n${FILLER[1]}\n`,
  json: (key) => `${JSON.stringify({ name: 'config', flag: key, retries: 3, filler: FILLER.slice(0, 2) }, null, 2)}\n`,
};
const KINDS = Object.keys(SOURCES);

function write(file, text) {
  writeFileSync(file, text);
}

/** Of every 20 directories, 2 are in node_modules/, 1 vendored, 1 ignored by the root .gitignore, 1 by its own. */
function directory(service, n) {
  const share = n % 20;
  if (share < 2) return { dir: `${service}/node_modules/pkg-${n}/lib`, kind: 'dependency' };
  if (share === 2) return { dir: `${service}/vendor/github.com/lib-${n}`, kind: 'dependency' };
  if (share === 3) return { dir: `${service}/dist/chunk-${n}`, kind: 'ignored' };
  if (share === 4) return { dir: `${service}/generated-${n}`, kind: 'nested-ignore' };
  return { dir: `${service}/src/module-${n}`, kind: 'code' };
}

/** The tree: 10 % of the files in node_modules/, 5 % vendored, about 14 % ignored (dist/, *.log, a nested .gitignore), 1.5 % binary, the rest code. */
function generateTree() {
  const started = performance.now();
  let files = 0;
  let dirs = 0;
  const perDir = 50;
  write(path.join(tree, '.gitignore'), '# build output and logs\ndist/\n*.log\n/coverage\n!keep.log\n');
  files++;
  while (files < totalFiles) {
    const { dir, kind } = directory(`services/svc-${Math.floor(dirs / 20)}`, dirs);
    const full = path.join(tree, dir);
    mkdirSync(full, { recursive: true });
    if (kind === 'nested-ignore') {
      // A nested .gitignore: everything but the hand-written file is ignored.
      write(path.join(full, '.gitignore'), '*\n!.gitignore\n!handwritten.ts\n');
      files++;
    }
    for (let i = 0; i < perDir && files < totalFiles; i++, files++) {
      const type = KINDS[pick(KINDS.length)];
      const name = kind === 'nested-ignore' && i === 0 ? 'handwritten.ts' : `file-${i}.${type}`;
      if (kind === 'code' && i % 50 === 49) {
        const binary = Buffer.alloc(4096);
        for (let b = 0; b < binary.length; b++) binary[b] = pick(256);
        binary[10] = 0;
        write(path.join(full, `image-${i}.png`), binary);
      } else if (kind === 'code' && i % 25 === 13) write(path.join(full, `debug-${i}.log`), `fetched ${flagKey(pick(flagCount))}\n`);
      else write(path.join(full, name), SOURCES[name.endsWith('.ts') ? 'ts' : type](someKey()));
    }
    dirs++;
  }
  return { files, seconds: (performance.now() - started) / 1000 };
}

function generateFlags() {
  const dir = path.join(flagsRepo, 'projects/bench/flags');
  mkdirSync(dir, { recursive: true });
  write(path.join(flagsRepo, 'projects/bench/project.yaml'), 'name: Bench\nslug: bench\n');
  for (const env of ['dev', 'staging', 'prod']) mkdirSync(path.join(flagsRepo, 'projects/bench/environments', env), { recursive: true });
  for (let i = 0; i < flagCount; i++) {
    // One flag in ten has expired: stale.
    const lifecycle = i % 10 === 0 ? 'lifecycle:\n  type: release\n  expiresAt: 2020-01-31\n' : '';
    write(path.join(dir, `${flagKey(i)}.yaml`), `key: ${flagKey(i)}\nkind: boolean\n${lifecycle}`);
    for (const env of ['dev', 'staging', 'prod'])
      write(
        path.join(flagsRepo, 'projects/bench/environments', env, `${flagKey(i)}.yaml`),
        'enabled: false\nrolloutPct: 0\nvalueOn: true\nvalueOff: false\n',
      );
  }
}

/**
 * One `flagops refs` process: its wall-clock time, and its CPU time (user + system, from bash's `time`), which
 * the machine's other work moves far less than the wall clock.
 */
function timeRun(args) {
  const out = path.join(root, 'refs.out');
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const started = performance.now();
  const res = spawnSync('bash', ['-c', `TIMEFORMAT='%3U %3S'; time ${quoted} > '${out}'`], { encoding: 'utf8' });
  const seconds = (performance.now() - started) / 1000;
  if (res.status !== 0) throw new Error(`flagops refs exited with ${res.status}: ${res.stderr}`);
  const lines = res.stderr.trimEnd().split('\n');
  const [user, system] = lines.pop().split(' ').map(Number);
  return { seconds, cpu: user + system, stdout: readFileSync(out, 'utf8'), stderr: lines.join('\n') };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

try {
  let generated = { files: totalFiles };
  if (!reused) {
    mkdirSync(tree, { recursive: true });
    generated = generateTree();
    generateFlags();
    console.log(`generated ${generated.files} files in ${generated.seconds.toFixed(1)} s under ${root}; ${flagCount} flags`);
  }
  const args = ['refs', '--dir', tree, '--flags', flagsRepo, '--project', 'bench', '--format', 'json'];
  const warm = timeRun(args);
  if (warm.stderr !== '') throw new Error(`flagops refs complained: ${warm.stderr}`);
  const report = JSON.parse(warm.stdout);
  const references = report.flags.reduce((n, f) => n + f.references.length, 0);
  const referencedFiles = new Set(report.flags.flatMap((f) => f.references.map((r) => r.file))).size;
  console.log(
    `report: ${report.flags.length} flags, ${references} references in ${referencedFiles} files, ${report.unknownKeys.length} unknown keys; first run ${warm.seconds.toFixed(2)} s (CPU ${warm.cpu.toFixed(2)} s)`,
  );
  const load = loadavg()[0];
  const measured = Array.from({ length: runs }, () => timeRun(args));
  const times = measured.map((m) => m.seconds);
  const cpu = measured.map((m) => m.cpu);
  console.log(
    `flagops refs over ${generated.files} files: median ${median(times).toFixed(2)} s, slowest ${Math.max(...times).toFixed(2)} s; CPU time median ${median(cpu).toFixed(2)} s (${runs} runs; load average ${load.toFixed(2)} → ${loadavg()[0].toFixed(2)})`,
  );

  const keysFile = path.join(root, 'keys.txt');
  writeFileSync(keysFile, Array.from({ length: flagCount }, (_, i) => flagKey(i)).join('\n'));
  const grepStarted = performance.now();
  try {
    execFileSync('grep', ['-rIFn', '-f', keysFile, '--exclude-dir=node_modules', '--exclude-dir=vendor', '--exclude-dir=.git', tree], {
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    console.log(
      `yardstick: grep -rIFn for the same keys, same skipped directories: ${((performance.now() - grepStarted) / 1000).toFixed(2)} s`,
    );
  } catch (err) {
    console.log(`yardstick: grep not run (${err.message.split('\n')[0]})`);
  }
} finally {
  if (process.env.BENCH_KEEP || reused) console.log(`kept ${root}`);
  else rmSync(root, { recursive: true, force: true });
}
