import { Document, isScalar, visit } from 'yaml';
import { normalizeConfig, normalizeFlag, normalizeKills, normalizeProject } from './normalize.js';
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
    Seq(_, node) {
      if (node.items.length > 0 && node.items.every((item) => isScalar(item)) && JSON.stringify(node.toJSON()).length <= INLINE_LIST_MAX) {
        node.flow = true;
      }
    },
  });
  return doc.toString({ indent: 2, indentSeq: true, lineWidth: 0, flowCollectionPadding: false });
}

