import { flagText } from '../format/flag-text.js';
import { defineTool } from './define-tool.js';
import { flagKey } from './inputs.js';
import { toolSuccess } from './tool-result.js';

export const getFlag = defineTool({
  name: 'get_flag',
  title: 'Read one flag',
  description: [
    'Reads one flag of the project: kind, values, and per environment (dev, staging, prod) enabled, rolloutPct, rules,',
    'the config version (pass it as expectedVersion to the write tools) and whether it is KILLED (with when, by whom, why).',
    'Read-only. Call it before changing a flag and after a version_conflict.',
  ].join(' '),
  input: { key: flagKey },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ key }, { scope }) {
    const flag = await scope.flag(key);
    return toolSuccess(flagText(flag), { flag });
  },
});
