import { StorageFaultError } from '../../errors/kinds.js';

/** What the file system answers when a write cannot be made durable, in words (never with a path). */
const WRITE_FAULTS: Readonly<Record<string, string>> = {
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EIO: 'input/output error',
};

/** The StorageFaultError a failed write of the repository is, or the error itself when it is no storage fault. */
export function writeFault(err: unknown): unknown {
  if (err instanceof StorageFaultError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const words = code === undefined ? undefined : WRITE_FAULTS[code];
  return words === undefined ? err : new StorageFaultError('write', `${words} (${code})`);
}

/** A read of the object database that failed for anything but the object's absence: the object is unusable. */
export function corruptObject(oid: string, err: unknown): StorageFaultError {
  if (err instanceof StorageFaultError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const cause = code !== undefined && WRITE_FAULTS[code] ? WRITE_FAULTS[code] : firstLine(err);
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
