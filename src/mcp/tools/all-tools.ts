import { clearKill } from './clear-kill.js';
import { createFlag } from './create-flag.js';
import type { McpTool } from './define-tool.js';
import { explainEvaluationTool } from './explain-evaluation.js';
import { getAuditLog } from './get-audit-log.js';
import { getFlag } from './get-flag.js';
import { killFlag } from './kill-flag.js';
import { listFlags } from './list-flags.js';
import { promoteFlag } from './promote-flag.js';
import { setRollout } from './set-rollout.js';
import { updateFlagConfig } from './update-flag-config.js';

/** Every tool, reads first: the order clients list them in. */
export const ALL_TOOLS: readonly McpTool[] = [
  listFlags,
  getFlag,
  getAuditLog,
  explainEvaluationTool,
  killFlag,
  clearKill,
  setRollout,
  updateFlagConfig,
  promoteFlag,
  createFlag,
];
