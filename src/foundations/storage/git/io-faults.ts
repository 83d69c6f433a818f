import { fileSystemFault } from '../../errors/file-system-fault.js';
import { StorageFaultError } from '../../errors/kinds.js';

/** The StorageFaultError a failed write of the repository is, or the error itself when it is no storage fault. */
export function writeFault(err: unknown): unknown {
  if (err instanceof StorageFaultError) return err;
  const fault = fileSystemFault(err);
  return fault === undefined ? err : new StorageFaultError('write', fault.message);
}

/** A read of the object database that failed for anything but the object's absence: the object is unusable. */
export function corruptObject(oid: string, err: unknown): StorageFaultError {
  if (err instanceof StorageFaultError) return err;
  const cause = fileSystemFault(err)?.words ?? firstLine(err);
  return new StorageFaultError('read', `git object ${oid.slice(0, 12)} cannot be read (${cause})`);
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  // Node's messages about files carry their path; the caller must never see the service's disk.
  return message
    .split('\n')[0]
    .replace(/'\/[^']*'/g, "'…'")
    .replace(/ \/\S+/g, ' …');
}
