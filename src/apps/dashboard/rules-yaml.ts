import { type Document, parseDocument } from 'yaml';
import { offsetOfPointer, SourcePositions } from '../../foundations/repository/yaml-position.js';
import { nonFinitePointers } from '../../foundations/validation/json-value.js';

export interface YamlIssue {
  message: string;
  /** JSON pointer inside the rules list, when the issue is about one value. */
  pointer?: string;
  line?: number;
  column?: number;
}

export interface ParsedRulesYaml {
  /** The rules as JSON, absent when the text is not valid YAML. Empty text is no rules. */
  value?: unknown;
  issues: YamlIssue[];
  /** Line and column of the node a JSON pointer (relative to the rules list) names, for schema issues. */
  positionOf(pointer: string): { line: number; column: number } | undefined;
}

/** How much YAML aliases (`*name`) may expand: rules need few, and an alias bomb needs many. */
const MAX_ALIASES = 100;

/** Why the `yaml` package gave up on a text that parses: aliases that expand without end, or nesting too deep. */
function unreadableMessage(err: unknown): string {
  if (err instanceof ReferenceError && /alias/i.test(err.message)) {
    return 'the rules use YAML aliases (*name) that expand to too much data; write the rules out without aliases';
  }
  if (err instanceof RangeError) return 'the rules nest too deeply to be read';
  return `the rules cannot be read as YAML: ${err instanceof Error ? err.message : String(err)}`;
}

/**
 * The rules editor's text, read the way the repository reads its YAML files (the `yaml` package, YAML 1.2),
 * so what the dashboard accepts is what a pushed file would hold.
 */
export function parseRulesYaml(text: string): ParsedRulesYaml {
  const positions = new SourcePositions(text);
  let doc: Document;
  let value: unknown;
  let bad: string[];
  try {
    doc = parseDocument(text, { prettyErrors: false });
    value = doc.errors.length > 0 ? undefined : (doc.toJS({ maxAliasCount: MAX_ALIASES }) ?? []);
    bad = nonFinitePointers(value);
  } catch (err) {
    return { issues: [{ message: unreadableMessage(err) }], positionOf: () => undefined };
  }
  const positionOf = (pointer: string) => {
    const offset = offsetOfPointer(doc, pointer);
    return offset === undefined ? undefined : positions.at(offset);
  };
  if (doc.errors.length > 0) {
    return { issues: doc.errors.map((e) => ({ message: `YAML syntax error: ${e.message}`, ...positions.at(e.pos[0]) })), positionOf };
  }
  // JSON, and so the API and the snapshot, cannot carry .inf or .nan.
  const issues = bad.map((pointer) => ({ message: 'must be a finite number (JSON has no .inf or .nan)', pointer, ...positionOf(pointer) }));
  return issues.length > 0 ? { issues, positionOf } : { value, issues, positionOf };
}
