/**
 * The README's five-minute tour, run as a newcomer runs it: its shell blocks, word for word, against the built
 * service (`node dist/main.js`, what `npm start` runs) in an empty directory. Only the ports change (the tour's
 * 4000 and 4001 may be taken on a test machine). The application block runs in the background as the "third
 * terminal". What the tour promises in its comments is what is asserted: the kill made from the MCP client is
 * served to the SDK, is in the audit trail under the agent, and the other answers are the ones shown. Then
 * docs/proposals.md and docs/releases.md go on from where the tour ends, their blocks run the same way.
 *
 * The newcomer has no git identity of their own (an empty HOME, and git told not to make one up from the
 * machine's user and host name), so the tour must set the one its commit needs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMETHEUS_MISSING, PrometheusServer } from '../helpers/prometheus.mjs';
import { freePort, waitHealthy } from '../service/service-process.js';
import { runBlock, shellBlocks } from './doc-blocks.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The JSON values printed one after the other (curl -s prints no newline), and the text between them. */
function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"' && depth > 0) inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && depth > 0 && --depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
  }
  return values;
}

async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the README tour', () => {
  let base: string;
  let dir: string;
  let service: ChildProcess;
  /** Scraping the service's own /metrics, for docs/releases.md's guarded rollout (absent where Prometheus is not installed). */
  let prometheus: PrometheusServer | undefined;
  let env: Record<string, string>;
  let blocks: string[];
  const ports = { control: 0, evaluation: 0 };

  beforeAll(async () => {
    base = await mkdtemp(path.join(os.tmpdir(), 'flagops-tour-'));
    // The directory a newcomer works in is the checkout: the built service, its scripts and its packages.
    dir = path.join(base, 'checkout');
    await mkdir(dir);
    for (const name of ['package.json', 'dist', 'node_modules', 'scripts', 'schemas', 'packages'])
      await symlink(path.join(ROOT, name), path.join(dir, name));
    for (const name of ['home', 'tmp']) await mkdir(path.join(base, name));
    ports.control = await freePort();
    ports.evaluation = await freePort();
    env = {
      PATH: process.env.PATH ?? '',
      HOME: path.join(base, 'home'),
      TMPDIR: path.join(base, 'tmp'),
      GIT_CONFIG_NOSYSTEM: '1',
      // No identity but the one the tour sets: git would otherwise make one up from the user and host name.
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'user.useConfigOnly',
      GIT_CONFIG_VALUE_0: 'true',
      npm_config_update_notifier: 'false',
    };
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const onOurPorts = (text: string) =>
      text.replaceAll('127.0.0.1:4000', `127.0.0.1:${ports.control}`).replaceAll('127.0.0.1:4001', `127.0.0.1:${ports.evaluation}`);
    blocks = shellBlocks(readme, 'A five-minute tour').map(onOurPorts);
    const start = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).scripts.start as string;
    if (PROMETHEUS_MISSING === null)
      prometheus = await PrometheusServer.start([`127.0.0.1:${ports.control}`, `127.0.0.1:${ports.evaluation}`]);
    service = spawn('bash', ['-c', start], {
      cwd: dir,
      env: {
        ...env,
        FLAGOPS_CONTROL_PORT: String(ports.control),
        FLAGOPS_EVAL_PORT: String(ports.evaluation),
        ...(prometheus ? { FLAGOPS_PROMETHEUS_URL: prometheus.url } : {}),
      },
      stdio: 'ignore',
    });
    await waitHealthy(`http://127.0.0.1:${ports.control}/healthz`, service);
  });

  afterAll(async () => {
    if (service && service.exitCode === null) {
      const exited = new Promise((resolve) => service.once('exit', resolve));
      service.kill('SIGTERM');
      await exited;
    }
    await prometheus?.stop();
    await rm(base, { recursive: true, force: true });
  });

  it('has the four blocks this test runs: the tour, the agent set-up, the application, the agent at work', () => {
    expect(blocks).toHaveLength(4);
  });

  it('kills a flag from an MCP client: the SDK serves the off value, the audit trail names the agent', async () => {
    const [tour, agentSetUp, application, agentAtWork] = blocks;
    // The terminals share the variables the tour sets; the application's terminal is told the SDK key.
    const secondTerminal = `set -euo pipefail\n${tour}\n${agentSetUp}\ndeclare -p SDK FLAG PROJECT API ADMIN auth git_auth REPO FLAGOPS_URL FLAGOPS_PROJECT FLAGOPS_AGENT_KEY > tour-vars.sh\n`;
    const first = await runBlock(secondTerminal, dir, env);
    expect(first.code, first.out).toBe(0);
    expect(first.out).toContain('{"checkout-v2":{"value":true,"reason":"rule_match","variation":"on","ruleId":"beta"}}');
    expect(first.out).toContain('{"checkout-v2":{"value":false,"reason":"killed","variation":"off"}}');
    expect(first.out).toContain('"actor":{"type":"git","name":"Erin Engineer"}');
    expect(first.out).toMatch(/^kill_flag: /m);
    // The clone is a directory of its own, outside the checkout, and keeps no key.
    const vars = (await runBlock('source tour-vars.sh; echo "$REPO"; echo "$ADMIN"', dir, env)).out.trim().split('\n');
    const [repo, admin] = vars;
    expect(path.relative(dir, repo).startsWith('..')).toBe(true);
    expect(await readFile(path.join(repo, '.git/config'), 'utf8')).not.toContain(admin);

    const app = spawn('bash', ['-c', `source tour-vars.sh\n${application}`], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let printed = '';
    app.stdout.on('data', (chunk) => (printed += chunk));
    app.stderr.on('data', (chunk) => (printed += chunk));
    try {
      await until('the application prints the flag on', async () => printed.includes("reason: 'rule_match'"));

      const second = await runBlock(`source tour-vars.sh\n${agentAtWork}`, dir, env);
      await until('the application prints the off value', async () => printed.includes("reason: 'killed'"), 5_000);
      expect(printed).toMatch(/\{ value: false, reason: 'killed', variation: 'off' \}/);
      expect(second.out).toMatch(/kill checkout-v2 in prod by agent svc_agt_\S+ \(ops-bot\) — reason: error rate above 5%/);
      expect(second.out).toContain('{"checkout-v2":{"value":false,"reason":"killed","variation":"off"}}');
      expect(second.out).toMatch(/forbidden: an agent key may not promote configs into prod/);
    } finally {
      app.kill('SIGTERM');
    }
  }, 120_000);

  it('goes on with docs/proposals.md: an agent proposes, an admin approves, an engineer reads the impact in git', async () => {
    const doc = (await readFile(path.join(ROOT, 'docs/proposals.md'), 'utf8'))
      .replaceAll('127.0.0.1:4000', `127.0.0.1:${ports.control}`)
      .replaceAll('127.0.0.1:4001', `127.0.0.1:${ports.evaluation}`);
    const [agent, reviewer, engineer, budgets] = shellBlocks(doc);
    // `npx flagops` in a checkout runs the checkout's own bin; this directory only links to the checkout.
    const npx = `npx() { if [ "$1" = flagops ]; then shift; node ${JSON.stringify(path.join(ROOT, 'dist/apps/cli/main.js'))} "$@"; else command npx "$@"; fi; }`;
    const out = await runBlock(`set -euo pipefail\nsource tour-vars.sh\n${npx}\n${agent}\n${reviewer}\n${engineer}\n${budgets}`, dir, env);
    expect(out.code, out.out).toBe(0);
    expect(out.out).toContain('"changes":["shop/checkout-v2 prod: rolloutPct 50 → 75"]');
    expect(out.out).toContain(
      '"impact":[{"environment":"prod","flagKey":"checkout-v2","exact":true,"movedPct":25,"moves":[{"from":"off","to":"on","pct":25}]}]',
    );
    expect(out.out).toMatch(/"status":"merged"/);
    expect(out.out).toMatch(/"proposalId":"[^"]+","proposedBy":\{"type":"agent","name":"deploy-bot"/);
    expect(out.out).toContain('shop/checkout-v2 prod: moves 25.00 % of users from off to on');
    // Budgets: within the budget applied, past it kept as a proposal with the figures, the use shown, the audit saying why.
    expect(out.out).toContain(
      '"reason":"budget","budget":{"environment":"staging","actorType":"agent","movedPctPerHour":10,"usedPct":5,"addsPct":20,"windowMinutes":60}',
    );
    expect(out.out).toMatch(
      /"environment":"staging","actorType":"agent","movedPctPerHour":10,"usedPct":5,"remainingPct":5,"changes":\[\{"commit":"[0-9a-f]{40}"/,
    );
    expect(out.out).toContain(
      '"reason":"budget: agent changes to staging moved 5.00 % of users in the last 60 minutes; this change would add 20.00 %, past the budget of 10 % an hour"',
    );
  }, 120_000);

  it('goes on with docs/releases.md: a schedule in the future, a rollout plan, a guarded one, a trigger that kills', async () => {
    const doc = (await readFile(path.join(ROOT, 'docs/releases.md'), 'utf8'))
      .replaceAll('127.0.0.1:4000', `127.0.0.1:${ports.control}`)
      .replaceAll('127.0.0.1:4001', `127.0.0.1:${ports.evaluation}`);
    const blocks = shellBlocks(doc);
    expect(blocks).toHaveLength(7);
    // One terminal, as a reader runs them; a marker between blocks tells their outputs apart.
    const script = blocks.map((block, i) => `echo '@@ block ${i}'\n${block}`).join('\n');
    const out = await runBlock(`set -euo pipefail\nsource tour-vars.sh\n${script}`, dir, env);
    expect(out.code, out.out).toBe(0);
    const [, clearKill, schedule, rolloutPlan, guarded, createTrigger, fired, anyTool] = out.out.split(/@@ block \d+\n/);
    type Flag = { environments: { prod: Record<string, unknown> } };
    const prod = (text: string) => (jsonValues(text) as Flag[]).map((flag) => flag.environments.prod);
    expect(prod(clearKill)).toMatchObject([{ killed: false }]);
    const nextStep = (pct: number) => ({ at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/), set: { rolloutPct: pct } });
    expect(prod(schedule)).toMatchObject([
      { schedule: [nextStep(25), nextStep(100)], nextStep: nextStep(25) },
      { schedule: [], nextStep: null },
    ]);
    expect(prod(rolloutPlan)).toMatchObject([{ enabled: true, rolloutPct: 5, nextStep: nextStep(25) }]);
    if (PROMETHEUS_MISSING === null) {
      const [plan, check] = jsonValues(guarded) as [Flag, { check: Record<string, unknown> }];
      expect(plan.environments.prod).toMatchObject({ enabled: true, rolloutPct: 5, schedule: [nextStep(50), nextStep(95), nextStep(100)] });
      expect((plan.environments.prod.schedule as Array<{ guard: unknown }>)[0].guard).toMatchObject({ max: 0.05, intervalSeconds: 5 });
      expect(check).toMatchObject({ check: { result: 'pass', value: 0, failures: 0 } });
    } else expect(guarded).toContain('a guard needs FLAGOPS_PROMETHEUS_URL');
    expect(createTrigger).toMatch(/"url":"http:\/\/127\.0\.0\.1:\d+\/hooks\/triggers\//);
    const [outcome, evaluation, audit] = jsonValues(fired);
    expect(outcome).toEqual({ outcome: 'killed' });
    expect(evaluation).toEqual({ 'checkout-v2': { value: false, reason: 'killed', variation: 'off' } });
    expect(audit).toMatchObject({
      entries: [{ action: 'kill', actor: { type: 'trigger', name: 'checkout error rate' }, reason: 'checkout error rate above 5 %' }],
    });
    expect(jsonValues(anyTool)).toEqual([{ outcome: 'already_killed' }]);
  }, 120_000);

  it('asks to delete the first admin key’s file only after the tour has read it', async () => {
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const read = readme.indexOf('ADMIN=$(cat data/state/initial-admin-key)');
    expect(read).toBeGreaterThan(0);
    expect(readme.slice(0, read)).not.toMatch(/delete|\brm\b/);
    expect(readme.slice(read)).toContain('rm data/state/initial-admin-key');
  });
});
