import type { MainMoved } from '../storage/flag-repository.js';
import type { RepositoryState } from '../model/index.js';
import type { ValidationIssue } from '../validation/issue.js';

/** What the evaluation side needs of a flags repository (the storage module's FlagRepository fits it). */
export interface ServingRepository {
  head(): Promise<string | null>;
  readState(commit?: string): Promise<{ commit: string | null; state: RepositoryState; issues: ValidationIssue[] }>;
  onMainMoved(listener: (event: MainMoved) => void): () => void;
  height(oid: string): Promise<number>;
  treeOid(commit: string, path: string): Promise<string | null>;
  readCommit(oid: string): Promise<{ parents: string[] }>;
}
