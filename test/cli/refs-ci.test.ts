import { execFile } from 'node:child_process';
import { appendFileSync, chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { git } from '../helpers/git-cli.js';
import { JQ_MISSING } from '../helpers/jq.js';
import { bundleMain } from '../service/service-process.js';
import { ROOT } from './cli-harness.js';

/**
 * docs/code-references.md run as written: its example output against the application it describes, and the
 * commands of its GitHub Actions and GitLab CI jobs in that application's checkout, with the flags repository
 * (the sample in flags/, search-ranking given an expiry that has passed) cloned from a bare repository as
 * the jobs clone it from the service. `flagops` on PATH is the CLI bundled from the sources; the one step not
 * run is `npm install --global flagops@…`, which needs a registry.
 */
const DOC = readFileSync(path.join(ROOT, 'docs/code-references.md'), 'utf8');
const INSTALL = /^npm install --global flagops@/;

/** The first fenced block of `lang` after the heading `heading`. */
function block(heading: string, lang: string): string {
  const at = DOC.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`docs/code-references.md has no heading ${heading}`);
  const match = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(DOC.slice(at));
  if (!match) throw new Error(`no ${lang} block after ${heading}`);
  return match[1];
}

/** The application the docs' example describes. */
const APP = {
  'web/checkout.ts':
    "import { client } from './flags';\n\nif (client.boolean('checkout-v2', false)) show();\nclient.boolean('checkout-v3', false);\n",
  'api/search.py': 'ranking = client.string("search-ranking", "classic")\n',
  'api/banner.go': 'package api\n\nvar banner = client.JSON("holiday-banner", nil, ctx)\n',
  '.gitignore': 'dist/\n',
};

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function shell(args: string[], script: string, cwd: string, env: Record<string, string>): Promise<Result> {
  return new Promise((resolve) => {
    execFile(args[0], [...args.slice(1), script], { cwd, env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const hasJq = JQ_MISSING === null;

describe('docs/code-references.md, run on a sample application', () => {
  let dir: string;
  let bin: Awaited<ReturnType<typeof bundleMain>>;
  let origin: string;
  let PATH: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'flagops-refs-ci-'));
    bin = await bundleMain({ source: 'src/apps/cli/main.ts' });
    const shims = path.join(dir, 'bin');
    mkdirSync(shims);
    writeFileSync(path.join(shims, 'flagops'), `#!/bin/sh\nexec "${process.execPath}" "${bin.entry}" "$@"\n`);
    chmodSync(path.join(shims, 'flagops'), 0o755);
    PATH = `${shims}${path.delimiter}${process.env.PATH}`;

    const seed = path.join(dir, 'flags');
    cpSync(path.join(ROOT, 'flags'), seed, { recursive: true });
    appendFileSync(path.join(seed, 'projects/shop/flags/search-ranking.yaml'), 'lifecycle:\n  type: experiment\n  expiresAt: 2020-06-30\n');
    git(seed, 'init', '--quiet', '--initial-branch=main');
    git(seed, 'add', '.');
    git(seed, '-c', 'user.name=Erin', '-c', 'user.email=erin@example.com', 'commit', '--quiet', '-m', 'flags');
    origin = path.join(dir, 'origin.git');
    git(dir, 'clone', '--quiet', '--bare', seed, origin);
  }, 120_000);
  afterAll(async () => {
    await bin?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A checkout of the application, with `files` changed. */
  function app(name: string, files: Record<string, string | null> = {}): string {
    const root = path.join(dir, name);
    for (const [file, text] of Object.entries({ ...APP, ...files })) {
      if (text === null) continue;
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    }
    return root;
  }
  const FIXED = { 'web/checkout.ts': "import { client } from './flags';\n\nif (client.boolean('checkout-v2', false)) show();\n" };

  it('prints the example output, as text and as JSON', async () => {
    const example = block('## What it reports', 'console');
    const [command, ...output] = example.split('\n');
    const root = app('example');
    const text = await shell(['bash', '-c'], command.replace(/^\$ /, '').replace('../flags', path.join(dir, 'flags')), root, { PATH });
    expect(text).toEqual({ code: 0, stdout: output.join('\n'), stderr: '' });
    const json = await shell(['bash', '-c'], `flagops refs --flags ${path.join(dir, 'flags')} --project shop --format json`, root, {
      PATH,
    });
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(block('## What it reports', 'json')));
  });

  async function githubJob(root: string): Promise<{ results: Result[]; summary: string }> {
    const workflow = parse(block('### GitHub Actions', 'yaml')) as {
      jobs: { refs: { env: Record<string, string>; steps: Array<{ run?: string }> } };
    };
    const job = workflow.jobs.refs;
    const commands = job.steps.flatMap((s) => (s.run === undefined ? [] : [s.run]));
    expect(commands.filter((c) => INSTALL.test(c))).toHaveLength(1);
    const secrets: Record<string, string> = { FLAGS_GIT_URL: origin, FLAGS_GIT_KEY: 'agt_key_for_the_flags_repository' };
    const env: Record<string, string> = { PATH, GITHUB_ACTIONS: 'true' };
    for (const [name, value] of Object.entries(job.env)) env[name] = value.replace(/\$\{\{ secrets\.(\w+) \}\}/, (_, s) => secrets[s]);
    env.RUNNER_TEMP = mkdtempSync(path.join(dir, 'runner-temp-'));
    env.GITHUB_STEP_SUMMARY = path.join(env.RUNNER_TEMP, 'summary.md');
    writeFileSync(env.GITHUB_STEP_SUMMARY, '');
    const results: Result[] = [];
    for (const command of commands.filter((c) => !INSTALL.test(c))) {
      const result = await shell(['bash', '--noprofile', '--norc', '-eo', 'pipefail', '-c'], command, root, env);
      results.push(result);
      if (result.code !== 0) break;
    }
    return { results, summary: readFileSync(env.GITHUB_STEP_SUMMARY, 'utf8') };
  }

  it.skipIf(!hasJq)('GitHub Actions: lists the stale flags still referenced, and fails on an unknown key with an annotation', async () => {
    const { results, summary } = await githubJob(app('github-unknown'));
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 1]);
    expect(summary).toBe(
      '### Stale flags still referenced\n- `holiday-banner` (stale): api/banner.go:3\n- `search-ranking` (stale): api/search.py:1\n',
    );
    expect(results[3].stdout).toMatch(/^::error file=web\/checkout\.ts,line=4::no flag has the key checkout-v3$/m);
    expect(results[3].stdout).toMatch(/^ {2}checkout-v3 {2}web\/checkout\.ts:4$/m);
  });

  it.skipIf(!hasJq)('GitHub Actions: passes when every evaluated key is a flag', async () => {
    const { results } = await githubJob(app('github-clean', FIXED));
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0]);
  });

  async function gitlabJob(root: string): Promise<Result> {
    const job = (parse(block('### GitLab CI', 'yaml')) as { 'flag-references': { before_script: string[]; script: string[] } })[
      'flag-references'
    ];
    expect(job.before_script.filter((c) => INSTALL.test(c))).toHaveLength(1);
    // GitLab runs before_script and script as one shell script, stopping at the first failing command.
    const script = [...job.before_script.filter((c) => !INSTALL.test(c)), ...job.script].join('\n');
    // The job's `mktemp -d` goes in a temp dir of the job's own, removed with the rest, as a runner's container is.
    const TMPDIR = mkdtempSync(path.join(dir, 'job-temp-'));
    const env = { PATH, TMPDIR, FLAGS_GIT_URL: origin, FLAGS_GIT_KEY: 'agt_key', CI_PIPELINE_SOURCE: 'merge_request_event' };
    return shell(['sh', '-e', '-c'], script, root, env);
  }

  it('GitLab CI: names the stale flags still referenced, and fails on an unknown key', async () => {
    const failed = await gitlabJob(app('gitlab-unknown'));
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^ {2}checkout-v3 {2}web\/checkout\.ts:4$/m);
    expect(failed.stdout).toMatch(/2 flags not active but still referenced: holiday-banner \(stale\), search-ranking \(stale\)/);
    const passed = await gitlabJob(app('gitlab-clean', FIXED));
    expect(passed.code).toBe(0);
    expect(passed.stdout).toMatch(/; 0 unknown keys; /);
  });
});
