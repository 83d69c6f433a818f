import type { EnvironmentConfig, FlagFile, KillsFile, ProjectFile, SegmentFile } from '@flagops/core';

/** One repository file, parsed, validated and typed; `kind` matches classifyPath of its path. */
export type ParsedFile =
  | { kind: 'project'; value: ProjectFile }
  | { kind: 'flag'; value: FlagFile }
  | { kind: 'config'; value: EnvironmentConfig }
  | { kind: 'kills'; value: KillsFile }
  | { kind: 'segment'; value: SegmentFile };

export type ParsedFileKind = ParsedFile['kind'];
