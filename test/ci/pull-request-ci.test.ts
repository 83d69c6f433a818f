import { execFile } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { git } from '../helpers/git-cli.js';
import { packAll, ROOT, run, writeApp } from '../packages/packed-app.js';

/**
 * The CI files of docs/flags-repository.md, run as written: the service package is packed and installed
 * offline into an empty directory (what `npm install --global flagops@…` does in CI, which this test cannot
 * do without a registry: it is the one step replaced), its bin directory is put on PATH, and every other
 * command of the GitHub workflow, the GitLab job and the pre-commit hook runs in a clone of a sample flags
 * repository (the example in flags/) with the variables the CI system sets.
 */
const DOC = readFileSync(path.join(ROOT, 'docs/flags-repository.md'), 'utf8');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const INSTALL = /^npm install --global flagops@/;

/** The first fenced block of `lang` after the heading `heading`. */
function block(heading: string, lang: string): string {
  const at = DOC.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`docs/flags-repository.md has no heading ${heading}`);
  const match = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(DOC.slice(at));
  if (!match) throw new Error(`no ${lang} block after ${heading}`);
  return match[1];
}

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function shell(shellArgs: string[], script: string, cwd: string, env: Record<string, string>): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      shellArgs[0],
      [...shellArgs.slice(1), script],
      { cwd, env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('the pull-request CI of docs/flags-repository.md, run against a sample flags repository', () => {
  let dir: string;
  let bin: string;
  let origin: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'flagops-ci-'));
    await run(process.execPath, [TSC, '-b', 'tsconfig.build.json'], ROOT);
    await run(process.execPath, ['scripts/build-packages.mjs'], ROOT);
    const packed = await packAll(path.join(dir, 'packs'));
    const service = packed.find((p) => p.name === 'flagops')!;
    const tool = path.join(dir, 'tool');
    await writeApp(tool, new Map([['flagops', path.join(dir, 'packs', service.filename)]]), []);
    await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], tool);
    bin = path.join(tool, 'node_modules/.bin');

    // The flags repository: main holds the example, as a hosted repository would.
    const seed = path.join(dir, 'seed');
    cpSync(path.join(ROOT, 'flags'), seed, { recursive: true });
    git(seed, 'init', '--quiet', '--initial-branch=main');
    git(seed, 'add', '.');
    git(seed, '-c', 'user.name=Erin', '-c', 'user.email=erin@example.com', 'commit', '--quiet', '-m', 'flags');
    origin = path.join(dir, 'origin.git');
    git(dir, 'clone', '--quiet', '--bare', seed, origin);
  }, 300_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A clone with a pull-request branch whose commit sets checkout-v2's prod rollout to `rolloutPct`. */
  function pullRequest(name: string, rolloutPct: number): string {
    const clone = path.join(dir, name);
    git(dir, 'clone', '--quiet', origin, clone);
    git(clone, 'checkout', '--quiet', '-b', name);
    const file = path.join(clone, 'projects/shop/environments/prod/checkout-v2.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('rolloutPct: 10\n', `rolloutPct: ${rolloutPct}\n`));
    git(clone, '-c', 'user.name=Erin', '-c', 'user.email=erin@example.com', 'commit', '--quiet', '-am', 'roll out');
    return clone;
  }

  const PATH = () => `${bin}${path.delimiter}${process.env.PATH}`;

  async function githubWorkflow(clone: string): Promise<{ results: Result[]; summary: string }> {
    const workflow = parse(block('### GitHub Actions', 'yaml')) as { jobs: { check: { steps: Array<{ run?: string }> } } };
    const commands = workflow.jobs.check.steps.flatMap((s) => (s.run === undefined ? [] : [s.run]));
    expect(commands.filter((c) => INSTALL.test(c))).toHaveLength(1);
    const summaryFile = path.join(clone, '..', `${path.basename(clone)}-summary.md`);
    writeFileSync(summaryFile, '');
    const env = { PATH: PATH(), GITHUB_BASE_REF: 'main', GITHUB_STEP_SUMMARY: summaryFile, GITHUB_ACTIONS: 'true' };
    const results: Result[] = [];
    for (const command of commands.filter((c) => !INSTALL.test(c))) {
      // GitHub's default shell on Linux runners.
      const result = await shell(['bash', '--noprofile', '--norc', '-eo', 'pipefail', '-c'], command, clone, env);
      results.push(result);
      if (result.code !== 0) break; // a failing step ends the job
    }
    return { results, summary: readFileSync(summaryFile, 'utf8') };
  }

  it('GitHub Actions: a valid change passes and its summary says what it changes, in words', async () => {
    const clone = pullRequest('valid-github', 50);
    const { results, summary } = await githubWorkflow(clone);
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    expect(summary).toBe('### Flag changes\n- shop/checkout-v2 prod: rolloutPct 10 → 50\n');
  });

  it('GitHub Actions: an invalid change fails the check with an annotation on the offending line', async () => {
    const clone = pullRequest('invalid-github', 250);
    const { results } = await githubWorkflow(clone);
    expect(results.map((r) => r.code)).toEqual([1]);
    expect(results[0].stdout).toMatch(/^::error file=projects\/shop\/environments\/prod\/checkout-v2\.yaml,line=2,.*rolloutPct/m);
  });

  async function gitlabJob(clone: string): Promise<Result[]> {
    const job = (parse(block('### GitLab CI', 'yaml')) as { flags: { before_script: string[]; script: string[] } }).flags;
    expect(job.before_script.filter((c) => INSTALL.test(c))).toHaveLength(1);
    const env = { PATH: PATH(), CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main', CI_PIPELINE_SOURCE: 'merge_request_event' };
    const results: Result[] = [];
    for (const command of [...job.before_script.filter((c) => !INSTALL.test(c)), ...job.script]) {
      const result = await shell(['sh', '-e', '-c'], command, clone, env);
      results.push(result);
      if (result.code !== 0) break;
    }
    return results;
  }

  it('GitLab CI: fetches the target branch, validates onto it and prints the changes; an invalid change fails the job', async () => {
    const valid = await gitlabJob(pullRequest('valid-gitlab', 25));
    expect(valid.map((r) => r.code)).toEqual([0, 0, 0]);
    expect(valid[1].stdout).toMatch(/^\.: valid \(1 valid project/);
    expect(valid[2].stdout).toBe('shop/checkout-v2 prod: rolloutPct 10 → 25\n');
    const invalid = await gitlabJob(pullRequest('invalid-gitlab', 250));
    expect(invalid.map((r) => r.code)).toEqual([0, 1]);
    expect(invalid[1].stdout).toMatch(/checkout-v2\.yaml:2:\d+: \/rolloutPct: must be a number from 0 to 100/);
  });

  it('the pre-commit hook refuses a commit whose staged files do not validate, whatever the working tree holds', async () => {
    const clone = path.join(dir, 'hooked');
    git(dir, 'clone', '--quiet', origin, clone);
    const hook = path.join(clone, '.git/hooks/pre-commit');
    writeFileSync(hook, block('### A pre-commit hook', 'sh'));
    chmodSync(hook, 0o755);
    const file = path.join(clone, 'projects/shop/environments/prod/checkout-v2.yaml');
    const original = readFileSync(file, 'utf8');
    const commit = () =>
      shell(['sh', '-c'], 'git -c user.name=Erin -c user.email=erin@example.com commit --quiet -m change', clone, { PATH: PATH() });

    writeFileSync(file, original.replace('rolloutPct: 10\n', 'rolloutPct: 250\n'));
    git(clone, 'add', file);
    writeFileSync(file, original.replace('rolloutPct: 10\n', 'rolloutPct: 20\n')); // fixed, but not staged
    const refused = await commit();
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/rolloutPct: must be a number from 0 to 100/);
    expect(refused.stderr).toMatch(/pre-commit: fix the issues above/);

    git(clone, 'add', file);
    const accepted = await commit();
    expect(accepted).toMatchObject({ code: 0 });
    expect(git(clone, 'log', '--format=%s', '-1')).toBe('change');
  });
});
