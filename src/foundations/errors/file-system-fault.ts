/**
 * What the file system answers when a write cannot be made durable, in words (never with a path). The one table
 * of them: the flags repository's writes and the state files' writes both report these as 503 `unavailable`.
 */
const WRITE_FAULTS: Readonly<Record<string, string>> = {
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EIO: 'input/output error',
};

export interface FileSystemFault {
  /** `no space left on the device` */
  words: string;
  /** `no space left on the device (ENOSPC)` */
  message: string;
}

/** The fault a failed file operation is, or undefined for any other error. */
export function fileSystemFault(err: unknown): FileSystemFault | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const words = code === undefined ? undefined : WRITE_FAULTS[code];
  return words === undefined ? undefined : { words, message: `${words} (${code})` };
}
