/** A started transport; close() stops it and lets the process end. */
export interface RunningMcp {
  close(): Promise<void>;
}
