import type { FlagKind, JsonValue } from '@flagops/core';
import { type AccessorProject, accessorNames, docLines, snakeName, typeName } from './accessor-model.js';

const METHOD: Record<FlagKind, { method: string; type: string }> = {
  boolean: { method: 'boolean', type: 'bool' },
  string: { method: 'string', type: 'str' },
  number: { method: 'number', type: 'float' },
  json: { method: 'json', type: 'Any' },
};

/** Names a method may not take: Python's keywords and the class's own attribute `client`. */
const RESERVED = new Set(
  [
    'false none true and as assert async await break class continue def del elif else except finally for from global if',
    'import in is lambda nonlocal not or pass raise return try while with yield match case client',
  ]
    .join(' ')
    .split(' '),
);

/** A Python literal of a JSON value (JSON's string escapes are Python's too). */
export function pythonLiteral(value: JsonValue): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number' || typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(', ')}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)}: ${pythonLiteral(v)}`)
    .join(', ')}}`;
}

/** A Python module for the flagops package: a class with one method per flag. */
export function emitPython(project: AccessorProject): string {
  const names = accessorNames(project.flags, snakeName, RESERVED);
  const name = typeName(project.slug);
  const methods = project.flags.map((flag) => {
    const { method, type } = METHOD[flag.kind];
    const doc = docLines(flag).map((line) => line.replaceAll('\\', '\\\\').replaceAll('"""', '\\"\\"\\"'));
    return `    def ${names.get(flag.key)}(self, context: Mapping[str, Any] | None = None) -> ${type}:
        """${doc.join('\n\n        ')}"""
        return self.client.${method}(${JSON.stringify(flag.key)}, ${pythonLiteral(flag.defaultValue)}, context)`;
  });
  return `"""Typed accessors for the flags of project ${project.slug}, written by \`flagops generate --lang python\`.

Do not edit: generate it again when flags change.
"""

from __future__ import annotations

from typing import Any, Mapping

from flagops import Client


class ${name}:
    """Project ${project.slug}'s flags, read from a client: \`${name}(Client(eval_url, sdk_key))\`."""

    def __init__(self, client: Client) -> None:
        self.client = client
${methods.length > 0 ? '\n' : ''}${methods.join('\n\n')}
`;
}
