import type { AuditEntry } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import type { DeliveryRecord, WebhookRecord } from '../../../src/foundations/state/index.js';
import type { StateSubject } from './state-subject.js';

const AT = '2026-05-01T10:00:00.000Z';
const ENTRY: AuditEntry = {
  id: 'c'.repeat(40),
  at: AT,
  action: 'kill',
  projectSlug: 'shop',
  flagKey: 'a',
  environment: 'prod',
  actor: { type: 'agent' },
} as AuditEntry;

function webhook(id: string, org = 'acme'): WebhookRecord {
  return { id, org, url: `https://example.test/${id}`, actions: [], secret: 'a-secret-of-16-chars-or-more', createdAt: AT };
}

function delivery(id: string, webhookId: string, fields: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    id,
    webhookId,
    auditId: ENTRY.id,
    action: 'kill',
    entry: ENTRY,
    status: 'pending',
    attempts: 0,
    createdAt: AT,
    nextAttemptAt: 0,
    ...fields,
  };
}

const finished = (d: DeliveryRecord, fields: Partial<DeliveryRecord>): DeliveryRecord => {
  const { entry: _entry, nextAttemptAt: _next, ...rest } = d;
  return { ...rest, ...fields };
};

export function describeWebhookStoreContract(subject: StateSubject): void {
  describe('WebhookStore', () => {
    it('starts with no webhook, no position and no delivery', async () => {
      const { state } = await subject.fresh();
      expect(await state.webhooks.read()).toEqual({ webhooks: [], cursors: {}, deliveries: [] });
    });

    it('keeps webhooks durably: another instance reads them', async () => {
      const { state, another } = await subject.fresh();
      await state.webhooks.createWebhook(webhook('w1'));
      await state.webhooks.createWebhook(webhook('w2', 'globex'));
      expect((await (await another()).webhooks.read()).webhooks).toEqual([webhook('w1'), webhook('w2', 'globex')]);
    });

    it('moves a position together with the deliveries made up to it, durably', async () => {
      const { state, another } = await subject.fresh();
      await state.webhooks.createWebhook(webhook('w1'));
      await state.webhooks.advance('acme', undefined, '', {});
      await state.webhooks.advance('acme', '', ENTRY.id, { added: [delivery('d1', 'w1'), delivery('d2', 'w1')] });
      expect(await (await another()).webhooks.read()).toEqual({
        webhooks: [webhook('w1')],
        cursors: { acme: ENTRY.id },
        deliveries: [delivery('d1', 'w1'), delivery('d2', 'w1')],
      });
    });

    it('records what attempts did, in place, and forgets deliveries by id', async () => {
      const { state, another } = await subject.fresh();
      await state.webhooks.createWebhook(webhook('w1'));
      await state.webhooks.advance('acme', undefined, ENTRY.id, {
        added: [delivery('d1', 'w1'), delivery('d2', 'w1'), delivery('d3', 'w1')],
      });
      const delivered = finished(delivery('d1', 'w1'), { status: 'delivered', attempts: 1, deliveredAt: AT });
      await state.webhooks.updateDeliveries({ changed: [delivered, delivery('gone', 'w1')], removed: ['d2'] }, 'now');
      expect((await (await another()).webhooks.read()).deliveries).toEqual([delivered, delivery('d3', 'w1')]);
    });

    it('writes what it was told to write soon by the time flush resolves', async () => {
      const { state, another } = await subject.fresh();
      await state.webhooks.createWebhook(webhook('w1'));
      await state.webhooks.advance('acme', undefined, ENTRY.id, { added: [delivery('d1', 'w1')] });
      const retried = delivery('d1', 'w1', { attempts: 1, lastError: 'the receiver answered 503', nextAttemptAt: 2_000 });
      const written = state.webhooks.updateDeliveries({ changed: [retried] }, 'soon');
      await state.webhooks.flush();
      await written;
      expect((await (await another()).webhooks.read()).deliveries).toEqual([retried]);
    });

    it('removes a webhook with its deliveries, and nothing for an id of another organisation', async () => {
      const { state, another } = await subject.fresh();
      await state.webhooks.createWebhook(webhook('w1'));
      await state.webhooks.createWebhook(webhook('w2'));
      await state.webhooks.advance('acme', undefined, ENTRY.id, { added: [delivery('d1', 'w1'), delivery('d2', 'w2')] });
      await state.webhooks.removeWebhook('globex', 'w1');
      await state.webhooks.removeWebhook('acme', 'w1');
      const read = await (await another()).webhooks.read();
      expect(read.webhooks).toEqual([webhook('w2')]);
      expect(read.deliveries).toEqual([delivery('d2', 'w2')]);
    });

    it('moves a position only from where the mover read it, and then adds nothing', async () => {
      const { state, another } = await subject.fresh();
      await state.webhooks.createWebhook(webhook('w1'));
      expect(await state.webhooks.advance('acme', undefined, '', {})).toBe(true);
      expect(await state.webhooks.advance('acme', undefined, ENTRY.id, { added: [delivery('d0', 'w1')] })).toBe(false);
      expect(await state.webhooks.advance('acme', '', ENTRY.id, { added: [delivery('d1', 'w1')] })).toBe(true);
      expect(await state.webhooks.advance('acme', '', 'e'.repeat(40), { added: [delivery('d2', 'w1')] })).toBe(false);
      const read = await (await another()).webhooks.read();
      expect(read.cursors).toEqual({ acme: ENTRY.id });
      expect(read.deliveries).toEqual([delivery('d1', 'w1')]);
    });

    it('claims an attempt of a pending delivery that is due, not of one due later, finished or unknown', async () => {
      const { state } = await subject.fresh();
      await state.webhooks.createWebhook(webhook('w1'));
      const later = delivery('d2', 'w1', { nextAttemptAt: 5_000 });
      await state.webhooks.advance('acme', undefined, ENTRY.id, { added: [delivery('d1', 'w1'), later, delivery('d3', 'w1')] });
      const delivered = finished(delivery('d3', 'w1'), { status: 'delivered', attempts: 1, deliveredAt: AT });
      await state.webhooks.updateDeliveries({ changed: [delivered] }, 'now');
      expect(await state.webhooks.claimAttempt('d1', 1_000, 20_000)).toEqual({ claimed: true, current: delivery('d1', 'w1') });
      expect(await state.webhooks.claimAttempt('d2', 1_000, 20_000)).toEqual({ claimed: false, current: later });
      expect(await state.webhooks.claimAttempt('d3', 1_000, 20_000)).toEqual({ claimed: false, current: delivered });
      expect(await state.webhooks.claimAttempt('nope', 1_000, 20_000)).toEqual({ claimed: false });
    });

    it('hands out copies: changing what read returned changes nothing stored', async () => {
      const { state } = await subject.fresh();
      await state.webhooks.createWebhook(webhook('w1'));
      await state.webhooks.advance('acme', undefined, ENTRY.id, { added: [delivery('d1', 'w1')] });
      const read = await state.webhooks.read();
      read.webhooks[0].url = 'https://mallory.test/';
      read.cursors.acme = '';
      read.deliveries[0].attempts = 9;
      expect(await state.webhooks.read()).toEqual({
        webhooks: [webhook('w1')],
        cursors: { acme: ENTRY.id },
        deliveries: [delivery('d1', 'w1')],
      });
    });
  });
}
