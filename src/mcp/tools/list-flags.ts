import { flagSummaryLine } from '../format/flag-text.js';
import { defineTool } from './define-tool.js';
import { toolSuccess } from './tool-result.js';

export const listFlags = defineTool({
  name: 'list_flags',
  title: 'List the flags of the project',
  description:
    'Lists every flag of the project (FLAGOPS_PROJECT) with its state in dev, staging and prod: KILLED, off, or on with its rollout. Read-only. Use it to find flag keys; get_flag gives one flag in full.',
  input: {},
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(_args, { scope }) {
    const { flags } = await scope.api.listFlags(await scope.projectId());
    const lines = flags.map(flagSummaryLine);
    const summary =
      flags.length === 0 ? `Project ${scope.slug} has no flags.` : [`${flags.length} flag(s) in ${scope.slug}:`, ...lines].join('\n');
    return toolSuccess(summary, { projectSlug: scope.slug, flags });
  },
});
