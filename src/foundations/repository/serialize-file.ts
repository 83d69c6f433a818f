import { Document, isScalar, visit } from 'yaml';
import { normalizeConfig, normalizeFlag, normalizeKills, normalizeProject, normalizeSegment } from './normalize.js';
import type { ParsedFile } from './parsed-file.js';

// A list of scalars short enough for one line is written inline (`value: [DE, FR]`): it reads as one value.
const INLINE_LIST_MAX = 80;

function toPlain(file: ParsedFile): unknown {
  switch (file.kind) {
    case 'project':
      return normalizeProject(file.value, file.value.slug);
    case 'flag':
      return normalizeFlag(file.value, '');
    case 'config':
      return normalizeConfig(file.value);
    case 'kills':
      return normalizeKills(file.value);
    case 'segment':
      return normalizeSegment(file.value);
  }
}

/**
 * Writes a typed file as YAML in one fixed key order with defaults spelled out, so that the control plane's
 * commits change only the lines that changed and reviews read the same from file to file.
 * parseRepositoryFile(path, serializeRepositoryFile(file)) gives `file` back.
 */
export function serializeRepositoryFile(file: ParsedFile): string {
  const doc = new Document(toPlain(file));
  visit(doc, {
    // yaml writes a string of only blank lines as a `|+` block without an indentation indicator, which reads
    // back without its leading spaces: quote it instead.
    Scalar(_, node) {
      // JSON reads "-0" as negative zero, which yaml writes as `-0`: the number is 0, and the file says so.
      if (Object.is(node.value, -0)) node.value = 0;
      if (isMultiline(node.value) && /^[ \t\n]*$/.test(node.value)) node.type = 'QUOTE_DOUBLE';
    },
    Seq(_, node) {
      // A multi-line string inside a flow list would be written as a block scalar, which flow lists cannot hold.
      const inline = node.items.every((item) => isScalar(item) && !isMultiline(item.value));
      if (node.items.length > 0 && inline && JSON.stringify(node.toJSON()).length <= INLINE_LIST_MAX) {
        node.flow = true;
      }
    },
  });
  return doc.toString({ indent: 2, indentSeq: true, lineWidth: 0, flowCollectionPadding: false });
}

function isMultiline(value: unknown): value is string {
  return typeof value === 'string' && value.includes('\n');
}
