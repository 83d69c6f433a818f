import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_MISSING, launchChromium } from '../../helpers/browser.js';
import { PROMPTLY_MS } from '../../helpers/deadlines.js';
import { httpClient, type Json } from '../../helpers/http-client.js';
import { startTestService, type TestService } from '../../helpers/start-test-service.js';
import { addUser } from '../helpers/dashboard-session.js';
import { signedInPage } from '../helpers/signed-in-page.js';

/** The Proposals page and a flag page's pending proposal, in a real browser: review, approve, reject. */
describe.skipIf(CHROMIUM_MISSING !== null)('change proposals in Chromium', () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let flag: Json;
  let project: Json;
  const leaks: string[] = [];
  const admin = () => httpClient(svc.controlUrl, svc.admin);
  const agent = () => httpClient(svc.controlUrl, svc.agent);
  const prodNow = async (): Promise<Json> => (await admin().get(`/api/v1/flags/${flag.id}`)).body.environments.prod;

  beforeAll(async () => {
    svc = await startTestService();
    await addUser(svc, 'alice', 'Alice Martin');
    project = (await admin().post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    flag = (await admin().post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout-v2' })).body;
    await admin().put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 10 });
    await admin().patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['agent'] } });
    browser = await launchChromium();
    page = await signedInPage(browser, svc, 'alice', leaks);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('the flag page shows a pending proposal for that flag', async () => {
    const proposed = await agent().put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 25 });
    expect(proposed.status).toBe(202);
    await page.goto(`${svc.controlUrl}/#/flags/${encodeURIComponent(flag.id)}/prod`);
    const pending = page.getByTestId('pending-proposals');
    await expect.poll(() => pending.textContent()).toContain('Pending proposal for prod');
    expect(await pending.textContent()).toContain('moves 15.00 % of users from off to on');
  });

  it('lists open proposals with the change in words, the impact and the proposer, and approves one after confirming', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Proposals' }).click();
    const open = page.getByTestId('open-proposals');
    const card = open.locator('.proposal-card').first();
    await expect.poll(() => card.textContent()).toContain('shop/checkout-v2 prod: rolloutPct 10 → 25');
    expect(await card.textContent()).toContain('checkout-v2 prod: moves 15.00 % of users from off to on');
    expect(await card.textContent()).toMatch(/by agent svc_agt_/);
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect((await prodNow()).rolloutPct).toBe(10);
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Approve' }).click();
    const decided = page.getByTestId('decided-proposals');
    await expect.poll(() => decided.textContent()).toContain('Approved: the change is live.');
    expect(await decided.textContent()).toContain('merged by session');
    expect((await prodNow()).rolloutPct).toBe(25);
    expect(await open.textContent()).toContain('No proposals wait for a review.');
  });

  it('rejects one with a reason', async () => {
    await agent().put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 90 });
    await page.reload();
    const card = page.getByTestId('open-proposals').locator('.proposal-card').first();
    await expect.poll(() => card.textContent()).toContain('rolloutPct 25 → 90');
    await card.getByRole('button', { name: 'Reject' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Reason (optional)').fill('too fast');
    await dialog.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(() => page.getByTestId('decided-proposals').textContent()).toContain('rejected by session');
    expect(await page.getByTestId('decided-proposals').textContent()).toContain('too fast');
    expect((await prodNow()).rolloutPct).toBe(25);
    expect(leaks).toEqual([]);
  });

  it('a proposal overtaken by a change on main says why, offers Reject and no Approve, as soon as main moves', async () => {
    const proposed = await agent().put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 100 });
    expect(proposed.status).toBe(202);
    const id = proposed.body.proposal.id;
    await page.goto(`${svc.controlUrl}/#/proposals`);
    await page.reload(); // the page may be there already, loaded before this proposal
    const card = page.locator(`[data-proposal="${id}"]`);
    await card.getByRole('button', { name: 'Approve' }).waitFor({ timeout: PROMPTLY_MS });
    const version = (await prodNow()).version;
    expect((await admin().put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 30 })).status).toBe(200);
    const reason = `prod config of checkout-v2 changed on main since: version ${version} → ${version + 1}`;
    await expect.poll(() => card.textContent(), { timeout: PROMPTLY_MS }).toContain(`Stale: ${reason}`);
    expect(await card.textContent()).toContain('It cannot be approved');
    expect(await card.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await card.getByRole('button', { name: 'Reject' }).count()).toBe(1);

    await page.goto(`${svc.controlUrl}/#/flags/${encodeURIComponent(flag.id)}/prod`);
    const pending = page.getByTestId('pending-proposals');
    await expect.poll(() => pending.textContent()).toContain(`Stale: ${reason}`);
    expect(await pending.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await pending.getByRole('button', { name: 'Reject' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Reject' }).click();
    await expect.poll(async () => (await admin().get(`/api/v1/proposals/${id}`)).body.status).toBe('rejected');
    await expect.poll(() => pending.textContent()).not.toContain('Stale');
    expect((await prodNow()).rolloutPct).toBe(30);
    expect(leaks).toEqual([]);
  });

  it("a project's page shows its budgets' use in the last hour, and a proposal kept for budget says why", async () => {
    const other = (await admin().post(`/api/v1/projects/${project.id}/flags`, { key: 'search' })).body;
    await admin().patch(`/api/v1/projects/${project.id}`, { budgets: { staging: { movedPctPerHour: 10, actors: ['agent'] } } });
    expect((await agent().put(`/api/v1/flags/${other.id}/environments/staging/config`, { enabled: true, rolloutPct: 6 })).status).toBe(200);
    await page.goto(`${svc.controlUrl}/#/projects/${encodeURIComponent(project.id)}`);
    const row = page.getByTestId('budgets').locator('[data-budget="staging/agent"]');
    await expect.poll(() => row.textContent(), { timeout: PROMPTLY_MS }).toContain('6.00 % of 10 %');
    expect(await row.textContent()).toContain('4.00 % left; 1 change counted');
    // Another change by the agent arrives while the page is open: the use follows.
    expect((await agent().put(`/api/v1/flags/${other.id}/environments/staging/config`, { rolloutPct: 9 })).status).toBe(200);
    await expect.poll(() => row.textContent(), { timeout: PROMPTLY_MS }).toContain('9.00 % of 10 %');
    const waiting = await agent().put(`/api/v1/flags/${other.id}/environments/staging/config`, { rolloutPct: 30 });
    expect(waiting.status).toBe(202);
    await page.goto(`${svc.controlUrl}/#/proposals`);
    const card = page.locator(`[data-proposal="${waiting.body.proposal.id}"]`);
    await expect
      .poll(() => card.textContent(), { timeout: PROMPTLY_MS })
      .toContain(
        'Waits for budget: agent changes to staging moved 9.00 % of users in the last 60 minutes; this change would add 21.00 %, past the budget of 10 % an hour.',
      );
    // Approved, it is live: the card no longer says it waits, and the project's budget says it is over.
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Approve' }).click();
    const decided = page.getByTestId('decided-proposals').locator(`[data-proposal="${waiting.body.proposal.id}"]`);
    await expect.poll(() => decided.textContent(), { timeout: PROMPTLY_MS }).toContain('Was kept for budget: ');
    expect(await decided.textContent()).not.toContain('Waits for budget');
    await page.goto(`${svc.controlUrl}/#/projects/${encodeURIComponent(project.id)}`);
    await expect.poll(() => row.textContent(), { timeout: PROMPTLY_MS }).toContain('30.00 % of 10 % — over by 20.00 %');
    expect(leaks).toEqual([]);
  });
  it('a save of its own kept as a proposal says so, shows the proposal at once, and leaves the served config in the editor', async () => {
    const guarded = (await admin().post(`/api/v1/projects/${project.id}/flags`, { key: 'reviewed' })).body;
    await admin().put(`/api/v1/flags/${guarded.id}/environments/prod/config`, { enabled: true, rolloutPct: 10 });
    await admin().patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['agent', 'session'] } });
    await page.goto(`${svc.controlUrl}/#/flags/${encodeURIComponent(guarded.id)}/prod`);
    const rollout = page.locator('input[name=rolloutPct]');
    await expect.poll(() => rollout.inputValue()).toBe('10');
    await rollout.fill('40');
    const save = page.locator('[data-action=save]');
    await expect.poll(() => save.isEnabled()).toBe(true);
    await save.click();
    await expect
      .poll(() => page.locator('.save-status').textContent())
      .toMatch(/^Not applied yet: kept as proposal \S+, which waits for approval/);
    await expect.poll(() => page.getByTestId('pending-proposals').textContent()).toContain('Pending proposal for prod');
    expect(await rollout.inputValue()).toBe('10');
    const served = (await admin().get(`/api/v1/flags/${guarded.id}`)).body.environments.prod;
    expect(served.rolloutPct).toBe(10);
    expect(leaks).toEqual([]);
  });
});
