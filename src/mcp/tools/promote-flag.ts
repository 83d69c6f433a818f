import { environmentLine } from '../format/flag-text.js';
import { defineTool } from './define-tool.js';
import { environment, flagKey } from './inputs.js';
import { toolError } from './tool-error.js';
import { toolSuccess } from './tool-result.js';

export const promoteFlag = defineTool({
  name: 'promote_flag',
  title: "Promote a flag's config to another environment",
  description: [
    "Copies a flag's whole config (enabled, rolloutPct, rules, valueOn, valueOff) from one environment to another, replacing the destination's; applies immediately and is audited.",
    'A kill in the destination stays as it is. Use it to move a tested config dev → staging.',
    'Promoting into prod is a deploy: an agent key is refused with forbidden, and a human with an admin key (or the dashboard) must do it.',
  ].join(' '),
  input: {
    key: flagKey,
    fromEnv: environment.describe('The source environment, whose config is copied.'),
    toEnv: environment.describe('The destination environment, whose config is replaced. prod is refused for agent keys.'),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run({ key, fromEnv, toEnv }, { scope }) {
    const flag = await scope.flag(key);
    try {
      const after = await scope.api.promote(flag.id, toEnv, fromEnv);
      return toolSuccess(`Promoted ${key} from ${fromEnv} to ${toEnv}.\n${environmentLine(toEnv, after.environments[toEnv])}`, {
        flag: after,
      });
    } catch (err) {
      return toolError(err, {
        forbidden: `Promoting into ${toEnv} needs a human: someone with an admin key or a dashboard session must promote ${key} from ${fromEnv} to ${toEnv}. Do not retry with this key; ask a human.`,
      });
    }
  },
});
