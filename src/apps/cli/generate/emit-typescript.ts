import type { FlagKind } from '@flagops/core';
import { type AccessorProject, accessorNames, camelName, docLines, typeName } from './accessor-model.js';

const METHOD: Record<FlagKind, { method: string; type: string }> = {
  boolean: { method: 'boolean', type: 'boolean' },
  string: { method: 'string', type: 'string' },
  number: { method: 'number', type: 'number' },
  json: { method: 'json', type: 'JsonValue' },
};

/**
 * Names an accessor may not take: the class's own members (its client, its constructor) and those every object
 * inherits, which code such as `String(flags)` or a library's `hasOwnProperty` call relies on.
 */
const RESERVED = new Set([
  'client',
  'constructor',
  'toString',
  'toLocaleString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
]);

/** A TypeScript module for @flagops/sdk: a class with one method per flag, reading a local-mode client. */
export function emitTypeScript(project: AccessorProject): string {
  const names = accessorNames(project.flags, camelName, RESERVED);
  const name = typeName(project.slug);
  const methods = project.flags.map((flag) => {
    const { method, type } = METHOD[flag.kind];
    const doc = docLines(flag).map((line) => `   * ${line.replaceAll('*/', '*\\/')}`);
    if (flag.archived) doc.push('   * @deprecated the flag is archived');
    return `  /**
${doc.join('\n')}
   */
  ${names.get(flag.key)}(context?: EvaluationContext): ${type} {
    return this.client.${method}(${JSON.stringify(flag.key)}, ${JSON.stringify(flag.defaultValue)}, context);
  }`;
  });
  return `// Typed accessors for the flags of project ${project.slug}, written by \`flagops generate --lang ts\`. Do not edit:
// generate it again when flags change.
import type { EvaluationContext, JsonValue, LocalClient } from '@flagops/sdk';

/** Project ${project.slug}'s flags, read from a local-mode client: \`new ${name}(createClient({ evalUrl, sdkKey }))\`. */
export class ${name} {
  constructor(readonly client: Pick<LocalClient, 'boolean' | 'string' | 'number' | 'json'>) {}
${methods.length > 0 ? '\n' : ''}${methods.join('\n\n')}
}
`;
}
