import { ApiError } from './api-error.js';
import type { FlagResponse } from './api-types.js';
import type { ControlPlaneClient } from './control-plane-client.js';

/**
 * The one project this server works in (FLAGOPS_PROJECT). Flags are found by project slug and key through
 * the lookup endpoint (service-spec §1), so an agent only ever names flag keys; the project's id, needed by
 * the list, create and audit endpoints, is read once and kept (ids never change).
 */
export class ProjectScope {
  #id: string | undefined;

  constructor(
    readonly api: ControlPlaneClient,
    readonly slug: string,
  ) {}

  async projectId(): Promise<string> {
    if (this.#id !== undefined) return this.#id;
    const { projects } = await this.api.listProjects();
    const project = projects.find((p) => p.slug === this.slug);
    if (!project) {
      const known = projects.map((p) => p.slug).join(', ') || 'none';
      throw new ApiError('not_found', `project "${this.slug}" (FLAGOPS_PROJECT) not found; this key's organisation has: ${known}`, 404);
    }
    this.#id = project.id;
    return project.id;
  }

  flag(key: string): Promise<FlagResponse> {
    return this.api.lookupFlag(this.slug, key);
  }
}
