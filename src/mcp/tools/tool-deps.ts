import type { Logger } from '../../log/logger.js';
import type { ProjectScope } from '../api/project-scope.js';

/** What every tool works with: the project it acts in (and through it the API), and the log. */
export interface ToolDeps {
  scope: ProjectScope;
  logger: Logger;
}
