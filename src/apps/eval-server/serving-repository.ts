import type { EnvironmentName, RepositoryState } from '@flagops/core';
import type { StorageFaultError } from '../../foundations/errors/kinds.js';
import type { InvalidFile } from '../../foundations/repository/held-units.js';
import type { MainMoved } from '../../foundations/storage/index.js';
import type { ValidationIssue } from '../../foundations/validation/issue.js';

/** What the evaluation side needs of a flags repository (the storage module's FlagRepository fits it). */
export interface ServingRepository {
  head(): Promise<string | null>;
  /** What a commit serves: as committed, but with what invalid files hold back at its last valid state. */
  readServed(commit: string): Promise<{ commit: string | null; state: RepositoryState; issues: ValidationIssue[] }>;
  /** The environments of a project whose served snapshot may differ between `commit` and its first parent. */
  servedChanges(commit: string, slug: string): Promise<ReadonlySet<EnvironmentName>>;
  onMainMoved(listener: (event: MainMoved) => void): () => void;
  height(oid: string): Promise<number>;
  readCommit(oid: string): Promise<{ parents: string[] }>;
  /** The repository's storage fault now, if it has one (a corrupt object, a read-only disk). */
  fault?(): OrganisationHealth['fault'];
  /** Told why main's head cannot be served (undefined: it is served): writes on it are refused meanwhile. */
  setServingFault?(fault: StorageFaultError | undefined): void;
}

export interface OrganisationHealth {
  org: string;
  commit: string | null;
  invalidFiles: InvalidFile[];
  /** Its repository cannot be read or written: what fails, in words. */
  fault?: { kind: 'read' | 'write'; message: string; since: string };
}

export interface HolderHealth {
  ready: boolean;
  /** Per organisation, the served commit and the invalid files on it (empty when there are none). */
  organisations: OrganisationHealth[];
}
