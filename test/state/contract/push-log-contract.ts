import type { Pusher } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import { appendHookPushRecords } from '../../../src/foundations/state/index.js';
import type { StateSubject } from './state-subject.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const AT = '2026-05-01T10:00:00.000Z';
const deployBot: Pusher = { type: 'agent', keyPrefix: 'svc_agt_3kq9x2ab', name: 'deploy-bot' };
const admin: Pusher = { type: 'admin', keyPrefix: 'svc_adm_7hh2k1cd' };

export function describePushLogContract(subject: StateSubject): void {
  describe('PushLog', () => {
    it('knows no pusher of an organisation with no push', async () => {
      const { state } = await subject.fresh();
      const reader = state.pushes.reader('acme');
      await reader.refresh();
      expect(reader.pusherOf(A)).toBeUndefined();
    });

    it('gives a reader what was appended since its last refresh, per organisation, durably', async () => {
      const { state, another } = await subject.fresh();
      const reader = state.pushes.reader('acme');
      await state.pushes.append('acme', [{ commit: A, pushedBy: deployBot, at: AT }]);
      await state.pushes.append('globex', [{ commit: B, pushedBy: admin, at: AT }]);
      expect(reader.pusherOf(A)).toBeUndefined(); // not read yet
      await reader.refresh();
      expect(reader.pusherOf(A)).toEqual(deployBot);
      expect(reader.pusherOf(B)).toBeUndefined();
      const restarted = (await another()).pushes.reader('globex');
      await restarted.refresh();
      expect(restarted.pusherOf(B)).toEqual(admin);
    });

    it('gives a commit recorded twice to its last record, and its time', async () => {
      const { state } = await subject.fresh();
      const later = '2026-05-01T10:05:00.000Z';
      await state.pushes.append('acme', [{ commit: A, pushedBy: deployBot, at: AT }]);
      await state.pushes.append('acme', [{ commit: A, pushedBy: admin, at: later }]);
      const reader = state.pushes.reader('acme');
      await reader.refresh();
      expect(reader.pusherOf(A)).toEqual(admin);
      // What budgets count a pushed commit from: when it was pushed, not the date its author wrote.
      expect(reader.pushedAt(A)).toBe(later);
      expect(reader.pushedAt(B)).toBeUndefined();
    });

    it('takes the records of a pre-receive hook, another process, at the target it was given', async () => {
      const { state } = await subject.fresh();
      await appendHookPushRecords(state.pushes.hookTarget('acme'), [{ commit: A, pushedBy: deployBot, at: AT }]);
      const reader = state.pushes.reader('acme');
      await reader.refresh();
      expect(reader.pusherOf(A)).toEqual(deployBot);
    });
  });
}
