/**
 * The count batches already taken from evaluation replicas, per organisation, so that a replica retrying a batch
 * whose answer it lost is not counted twice, across a restart too. Ids are kept for a day: replicas retry
 * within minutes.
 */
export interface ReplicaBatchLedger {
  /**
   * Claims `batchId` for `org`: false when it was claimed before (a retry). Resolves once the claim is durable,
   * so the caller adds the batch's counts only after that: a crash in between loses them, never counts them twice.
   */
  claim(org: string, batchId: string): Promise<boolean>;
}
