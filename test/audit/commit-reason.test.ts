import { describe, expect, it } from 'vitest';
import { commitReason } from '../../src/features/audit/commit-entries.js';
import { parseCommitMessage } from '../../src/foundations/storage/index.js';

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

  it('is read from a reason trailer when that is all an engineer wrote below the summary', () => {
    expect(reasonOf('Kill b in dev\n\nReason: memory leak')).toBe('memory leak');
  });

  it('is absent when the message has none', () => {
    expect(reasonOf('enable a in prod\n\nFlagops-Action: config_update\nFlagops-Actor-Type: admin\n')).toBeUndefined();
    expect(reasonOf('Tidy up\n\nreasonable defaults for everyone')).toBeUndefined();
    expect(reasonOf('Kill b\n\nreason:')).toBeUndefined();
  });
});
