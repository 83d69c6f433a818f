import { describe, expect, it } from 'vitest';
import type { KillView } from '../../src/apps/control-plane/environments.js';
import type { ChangePreview } from '../../src/apps/control-plane/preview.js';
import type { SegmentView } from '../../src/apps/control-plane/segments.js';
import type { FlagView, ProjectView } from '../../src/apps/control-plane/views.js';
import type {
  AuditPage,
  ChangePreviewResponse,
  FlagResponse,
  ProjectResponse,
  ProposalResponse,
  SegmentResponse,
} from '../../src/apps/mcp/api-types.js';
import type { AuditPage as SentAuditPage } from '../../src/features/audit/audit-query.js';
import type { Proposal } from '../../src/features/proposals/proposal-reader.js';

/** True when every answer of type Sent is a Read: the fields the reader relies on are sent, with their types. */
type Fits<Sent, Read> = [Sent] extends [Read] ? true : false;

// Checked by the compiler (npm run lint): flagops-mcp keeps its own copy of the answers it reads, as it may not
// import the server's code; these say the copy still matches what the control plane builds.
const fits: [
  Fits<ProjectView, ProjectResponse>,
  Fits<FlagView, FlagResponse>,
  Fits<KillView, FlagResponse>,
  Fits<SegmentView, SegmentResponse>,
  Fits<Proposal, ProposalResponse>,
  Fits<ChangePreview, ChangePreviewResponse>,
  Fits<SentAuditPage, AuditPage>,
] = [true, true, true, true, true, true, true];

describe('the answers flagops-mcp reads', () => {
  it('are shaped as the control plane builds them', () => {
    expect(fits).not.toContain(false);
  });
});
