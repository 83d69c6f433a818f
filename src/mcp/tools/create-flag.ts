import { z } from 'zod';
import { flagText } from '../format/flag-text.js';
import { defineTool } from './define-tool.js';
import { flagKey, flagKind, jsonValue } from './inputs.js';
import { toolSuccess } from './tool-result.js';

export const createFlag = defineTool({
  name: 'create_flag',
  title: 'Create a flag',
  description: [
    'Creates a flag in the project with a config in every environment, each disabled at rollout 0% (it serves valueOff everywhere until you change it). Audited as flag_create.',
    'Fails with conflict if the key exists (read it with get_flag instead). Then turn it on with update_flag_config, starting in dev.',
  ].join(' '),
  input: {
    key: flagKey.describe('The new business key: letters, digits, ".", "_" or "-", starting with a letter or digit.'),
    name: z.string().min(1).max(256).optional().describe('Display name.'),
    description: z.string().max(4096).optional(),
    kind: flagKind.optional().describe('boolean (default), string, number or json; values must fit it.'),
    defaultValue: jsonValue.optional().describe('Served if the flag is archived; must fit the kind.'),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ key, name, description, kind, defaultValue }, { scope }) {
    const created = await scope.api.createFlag(await scope.projectId(), { key, name, description, kind, defaultValue });
    return toolSuccess(`Created ${key} in ${scope.slug}.\n${flagText(created)}`, { flag: created });
  },
});
