import { type Document, parseDocument, visit } from 'yaml';
import type { ValidationIssue } from '../validation/issue.js';
import { nonFinitePointers } from '../validation/json-value.js';
import type { DocumentSchemaName } from '../validation/schema-files.js';
import { validateDocument } from '../validation/validate-document.js';
import { readSimpleYaml } from './fast-yaml.js';
import { classifyPath, layout } from './layout.js';
import { normalizeConfig, normalizeFlag, normalizeKills, normalizeProject, normalizeSegment } from './normalize.js';
import type { ParsedFile, ParsedFileKind } from './parsed-file.js';
import { fileSizeRefusal } from './tree-rules.js';
import { offsetOfPointer, SourcePositions } from './yaml-position.js';

export interface ParseResult {
  /** Present when the file is valid on its own (cross-file checks come later, in assembleState). */
  file?: ParsedFile;
  issues: ValidationIssue[];
}

const SCHEMA_OF: Readonly<Record<ParsedFileKind, DocumentSchemaName>> = {
  project: 'project',
  flag: 'flag',
  config: 'environment-config',
  kills: 'kills',
  segment: 'segment',
};

const LAYOUT_HINT =
  'is not part of the repository layout: expected projects/<slug>/project.yaml, projects/<slug>/flags/<key>.yaml, ' +
  'projects/<slug>/environments/<dev|staging|prod>/<key>.yaml or kills.yaml, or projects/<slug>/segments/<key>.yaml';

/**
 * What every reader of repository files (a push, the git host's main, `flagops validate`, an import) decodes
 * bytes that are not UTF-8 to: such a file is invalid, as the API refuses such a body, rather than served with
 * its text garbled. The character itself, validly encoded, is refused too: it is no text a flag file needs.
 */
const REPLACEMENT_CHARACTER = '\uFFFD';
const NOT_UTF8 =
  'is not valid UTF-8 text: bytes here are no UTF-8 character (or are U+FFFD, the replacement character); save the file as UTF-8';

/** How deep arrays and objects may nest in a value (the schemas' flagValue says so too). */
const MAX_VALUE_DEPTH = 64;
/**
 * Said of YAML nested so deep that reading it runs out of stack (yaml reports a RangeError as a syntax error,
 * or throws it): the limit it is far past, not the parser's words.
 */
const TOO_DEEP = `is nested deeper than ${MAX_VALUE_DEPTH} levels: arrays and objects may nest at most ${MAX_VALUE_DEPTH} levels deep`;
const STACK_OVERFLOW = /maximum call stack size exceeded/i;

// YAML can say .inf and .nan; JSON, and so the API and the snapshot, cannot.
const NON_FINITE_HINT = /\.(?:inf|nan)\b/i;

/** Adds line and column where the path can be found in the YAML, and orders the issues as the file reads. */
function withPositions(issues: ValidationIssue[], doc: Document, positions: SourcePositions): ValidationIssue[] {
  const located = issues.map((issue) => {
    const offset = offsetOfPointer(doc, issue.path ?? '');
    return offset === undefined ? issue : { ...issue, ...positions.at(offset) };
  });
  return located.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

/**
 * Parses, validates and types one file of the flags repository. `path` is its repository path
 * (`projects/shop/flags/checkout-v2.yaml`); it decides the file's kind (layout.ts). Files outside the layout
 * (README.md, .gitignore) give nothing, but a YAML file under projects/ in an unexpected place is an issue.
 */
export function parseRepositoryFile(path: string, text: string): ParseResult {
  // Refused on every way in (a push, the git host's main, an import), not only where the tree is checked first.
  const tooBig = classifyPath(path).kind === 'other' ? undefined : fileSizeRefusal(text);
  if (tooBig) return { issues: [{ file: path, message: tooBig }] };
  const notUtf8 = classifyPath(path).kind === 'other' ? -1 : text.indexOf(REPLACEMENT_CHARACTER);
  if (notUtf8 >= 0) return { issues: [{ file: path, ...new SourcePositions(text).at(notUtf8), message: NOT_UTF8 }] };
  try {
    return parseLayoutFile(path, text);
  } catch (err) {
    // A file that cannot be read is an invalid file like any other (held back, reported), never a crash.
    return { issues: [unreadableIssue(path, text, err)] };
  }
}

/**
 * Why a file could not be read, in words: an alias with no anchor before it, or aliases `yaml` refuses to expand
 * past a limit (a few hundred bytes of `&a [*b, *b, ...]` can stand for billions of values); anything else
 * unexpected is named by kind.
 */
function unreadableIssue(path: string, text: string, err: unknown): ValidationIssue {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof RangeError && STACK_OVERFLOW.test(message)) return { file: path, line: 1, column: 1, message: TOO_DEEP };
  if (/alias/i.test(message)) {
    const unresolved = /^Unresolved alias[^:]*: (.*)$/.exec(message);
    const doc = parseDocument(text, { prettyErrors: false });
    let offset = 0;
    visit(doc, {
      Alias(_, node) {
        if (unresolved && node.source !== unresolved[1]) return;
        offset = node.range?.[0] ?? 0;
        return visit.BREAK;
      },
    });
    const position = new SourcePositions(text).at(offset);
    return {
      file: path,
      ...position,
      message: unresolved
        ? `YAML syntax error: the alias *${unresolved[1]} names no anchor before it (define &${unresolved[1]} first, or write the value out)`
        : 'could not be read: its YAML aliases expand to too many values (write the values out instead of using aliases)',
    };
  }
  return {
    file: path,
    line: 1,
    column: 1,
    message: `could not be read as a flags repository file (${err instanceof Error ? err.name : 'error'})`,
  };
}

function parseLayoutFile(path: string, text: string): ParseResult {
  const where = classifyPath(path);
  if (where.kind === 'other') {
    if (path.startsWith(`${layout.projectsDir}/`) && /\.ya?ml$/i.test(path)) return { issues: [{ file: path, message: LAYOUT_HINT }] };
    return { issues: [] };
  }
  const positions = new SourcePositions(text);
  let doc: Document | undefined;
  let value = readSimpleYaml(text);
  if (value === undefined) {
    // prettyErrors off: its messages span several lines; the position is reported separately instead.
    doc = parseDocument(text, { prettyErrors: false });
    if (doc.errors.length > 0) {
      return {
        issues: doc.errors.map((error) => ({
          file: path,
          ...positions.at(error.pos[0]),
          message: STACK_OVERFLOW.test(error.message) ? TOO_DEEP : `YAML syntax error: ${error.message}`,
        })),
      };
    }
    value = doc.toJS();
  }
  if (value === null || value === undefined) {
    if (where.kind !== 'kills') return { issues: [{ file: path, line: 1, column: 1, message: 'the file is empty' }] };
    value = {};
  }
  const issues = validateDocument(SCHEMA_OF[where.kind], value, path);
  if (NON_FINITE_HINT.test(text))
    for (const pointer of nonFinitePointers(value))
      issues.push({ file: path, path: pointer, message: 'must be a finite number (JSON has no .inf or .nan)' });
  if (issues.length > 0) return { issues: withPositions(issues, doc ?? parseDocument(text, { prettyErrors: false }), positions) };
  switch (where.kind) {
    case 'project':
      return { file: { kind: 'project', value: normalizeProject(value as object, where.project) }, issues };
    case 'flag':
      return { file: { kind: 'flag', value: normalizeFlag(value as object, where.project) }, issues };
    case 'config':
      return { file: { kind: 'config', value: normalizeConfig(value as object) }, issues };
    case 'kills':
      return { file: { kind: 'kills', value: normalizeKills(value as object) }, issues };
    case 'segment':
      return { file: { kind: 'segment', value: normalizeSegment(value as object) }, issues };
  }
}
