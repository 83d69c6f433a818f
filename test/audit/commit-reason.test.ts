import { describe, expect, it } from 'vitest';
import { commitReason } from '../../src/features/audit/commit-entries.js';
import { formatCommitMessage, parseCommitMessage } from '../../src/foundations/storage/index.js';
import { agent } from './fixtures.js';

const reasonOf = (message: string) => commitReason(parseCommitMessage(message));

describe('the reason a commit gives (docs/architecture.md "Commits and trailers")', () => {
  it('is read from the body the kill switch writes, above the Flagops trailers', () => {
    expect(reasonOf('kill checkout-v2 in prod\n\nreason: error rate above 5%\n\nFlagops-Action: kill\nFlagops-Actor-Type: agent\n')).toBe(
      'error rate above 5%',
    );
  });

  it('keeps a reason that runs over several lines, up to the end of its paragraph', () => {
    expect(reasonOf('kill x\n\nreason: payments failing\nsee incident 42\n\nmore notes\n\nFlagops-Action: kill\n')).toBe(
      'payments failing\nsee incident 42',
    );
  });

  it('is read whole from a body the service wrote, blank lines and trailer-like lines too', () => {
    const reason = 'Error rate 7% after deploy 1432.\n\nFlagops-Actor-Type: admin\n\nRollback planned; see INC-42.';
    const message = formatCommitMessage({ action: 'kill', summary: 'kill a in prod', body: `reason: ${reason}`, actor: agent });
    expect(reasonOf(message)).toBe(reason);
  });

  it('is read from its own paragraph of a body written as several', () => {
    const body = ['step due at 2026-11-21T12:00:00Z', 'reason: guard passed\n\nvalue 0.02'];
    const message = formatCommitMessage({ action: 'scheduled_change', summary: 'scheduled step', body, actor: agent });
    expect(parseCommitMessage(message).bodyParagraphs).toEqual(body);
    expect(reasonOf(message)).toBe('guard passed\n\nvalue 0.02');
  });

  it('is read from a reason trailer when that is all an engineer wrote below the summary', () => {
    expect(reasonOf('Kill b in dev\n\nReason: memory leak')).toBe('memory leak');
  });

  it('is absent when the message has none', () => {
    expect(reasonOf('enable a in prod\n\nFlagops-Action: config_update\nFlagops-Actor-Type: admin\n')).toBeUndefined();
    expect(reasonOf('Tidy up\n\nreasonable defaults for everyone')).toBeUndefined();
    expect(reasonOf('Kill b\n\nreason:')).toBeUndefined();
  });
});
