#!/usr/bin/env node
// Writes src/foundations/validation/api-types.generated.ts: a TypeScript type for each request body schema of
// schemas/api/, following its $refs into the other schemas, so that the schemas are the one source of the
// control plane's and the MCP server's body types.
//   node scripts/generate-api-types.mjs
// The file is committed; test/validation/api-types-generated.test.ts fails while it differs from what this
// writes. It types what the schemas let through: conditions that only narrow a value (if/then on another
// field, not, patterns, limits) leave the wider type; a keyword it does not know is an error, never a guess.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const API_TYPES_FILE = 'src/foundations/validation/api-types.generated.ts';
const BASE = 'https://flagops.dev/schemas/';

/** Keywords that never change the type: annotations and checks of a value's content or size. */
const IGNORED = new Set([
  ...['$schema', '$id', '$defs', '$comment', 'title', 'description', 'default', 'examples', 'x-error', 'x-max-depth'],
  ...['pattern', 'format', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  ...['minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'not'],
]);
const SHAPE = new Set(['$ref', 'type', 'enum', 'const', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'oneOf']);
const CONDITIONAL = new Set(['allOf', 'if', 'then', 'else']);
const LINE_WIDTH = 140;

/** Every schema file, keyed by its path under schemas/ (`common.schema.json`, `api/kill.schema.json`). */
export function readSchemas(dir = path.join(root, 'schemas')) {
  const schemas = {};
  for (const sub of ['', 'api/']) {
    for (const file of readdirSync(path.join(dir, sub)).sort()) {
      if (file.endsWith('.schema.json')) schemas[sub + file] = JSON.parse(readFileSync(path.join(dir, sub, file), 'utf8'));
    }
  }
  return schemas;
}

const pascal = (name) => name.replace(/(^|[-_])([a-z])/g, (_, __, c) => c.toUpperCase()).replace(/^[a-z]/, (c) => c.toUpperCase());
const literal = (value) =>
  typeof value === 'string' ? `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'` : JSON.stringify(value);
const key = (name) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : literal(name));
const doc = (text, indent = '') => {
  if (text.includes('*/')) throw new Error(`a description may not contain */: ${text}`);
  return `${indent}/** ${text} */\n`;
};

/** The schema with every $ref made absolute, so a part of it reads the same wherever it is merged. */
function absolute(node, base) {
  if (Array.isArray(node)) return node.map((item) => absolute(item, base));
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === '$ref' ? new URL(v, base).href : absolute(v, base)]));
}

/** The TypeScript source of the body types of `schemas` (as readSchemas returns them). */
export function generateApiTypes(schemas) {
  const byId = new Map();
  for (const [file, schema] of Object.entries(schemas)) {
    if (schema.$id !== BASE + file) throw new Error(`schemas/${file}: $id must be ${BASE + file}`);
    byId.set(schema.$id, absolute(schema, schema.$id));
  }
  const bodies = Object.keys(schemas)
    .flatMap((file) => /^api\/(.+)\.schema\.json$/.exec(file)?.[1] ?? [])
    .sort();
  /** Named types by absolute $ref, in the order they are first met; their names must not clash. */
  const named = new Map();
  const names = new Map();
  const short = (href) => href.replace(BASE, '');

  function resolve(href) {
    const [file, pointer = ''] = href.split('#');
    let node = byId.get(file);
    if (node === undefined) throw new Error(`$ref ${short(href)} names no schema file`);
    for (const raw of pointer.split('/').slice(1)) node = node?.[decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~')];
    if (node === undefined) throw new Error(`$ref ${short(href)} points at nothing`);
    return node;
  }

  /** A body schema's root, an object or an enum gets a name; anything else is written where it is used. */
  function nameOf(href, node) {
    const [file, pointer = ''] = href.split('#');
    const body = /\/api\/(.+)\.schema\.json$/.exec(file);
    if (body && pointer === '') return `${pascal(body[1])}Body`;
    if (pointer === '' || !(node.type === 'object' || Array.isArray(node.enum))) return undefined;
    return pascal(pointer.split('/').pop());
  }

  function refName(href, at) {
    const node = resolve(href);
    const name = nameOf(href, node);
    if (name === undefined) return undefined;
    const other = names.get(name);
    if (other !== undefined && other !== href) throw new Error(`${at}: ${short(href)} and ${short(other)} would both be the type ${name}`);
    if (!named.has(href)) {
      names.set(name, href);
      named.set(href, { name, node, at: short(href) });
    }
    return name;
  }

  /** The schema with an unnamed $ref target merged in and a size guard's `then` applied; or the $ref's name. */
  function flatten(schema, at) {
    let out = { ...schema };
    if (out.$ref !== undefined) {
      const { $ref, ...rest } = out;
      const name = refName($ref, at);
      if (name !== undefined) {
        const extra = Object.keys(rest).filter((k) => !IGNORED.has(k));
        if (extra.length > 0) throw new Error(`${at}: cannot type ${extra.join(', ')} beside a $ref to ${name}`);
        return { named: name };
      }
      const target = flatten(resolve($ref), `${at} → ${short($ref)}`);
      if (target.named) return target;
      for (const k of Object.keys(rest)) {
        if (!IGNORED.has(k) && k in target.schema) throw new Error(`${at}: ${k} both here and in ${short($ref)}`);
      }
      out = { ...target.schema, ...rest };
    }
    if (out.if !== undefined) {
      const guard = Object.keys(out.if);
      if (guard.length === 1 && guard[0] === 'maxItems' && Object.keys(out.then ?? {}).every((k) => k === 'items') && !out.else) {
        // Items checked only within the list's size limit (one error for an oversized list): a valid list is within it.
        if (!(out.maxItems <= out.if.maxItems)) throw new Error(`${at}: items are checked only up to ${out.if.maxItems}, below the limit`);
        if (out.items !== undefined) throw new Error(`${at}: items both here and in then`);
        out.items = out.then.items;
      }
      // Any other condition only narrows the value (one field's type by another's): the wider type holds.
      delete out.if;
      delete out.then;
      delete out.else;
    }
    return { schema: out };
  }

  /** Whether the schema says anything about the type (allOf members made only of conditions do not). */
  function shaped(schema) {
    if (typeof schema === 'boolean') return true;
    if (Object.keys(schema).some((k) => SHAPE.has(k) && k !== '$ref')) return true;
    if (schema.$ref !== undefined && shaped(resolve(schema.$ref))) return true;
    return (schema.allOf ?? []).some(shaped);
  }

  function typeOf(schema, at) {
    if (schema === true) return 'JsonValue';
    if (schema === false) return 'never';
    for (const k of Object.keys(schema)) {
      if (!IGNORED.has(k) && !SHAPE.has(k) && !CONDITIONAL.has(k)) throw new Error(`${at}: cannot type the keyword ${k}`);
    }
    const flat = flatten(schema, at);
    if (flat.named) return flat.named;
    const s = flat.schema;
    const parts = [];
    if (Array.isArray(s.enum)) parts.push(union(s.enum.map(literal)));
    if ('const' in s) parts.push(literal(s.const));
    for (const k of ['anyOf', 'oneOf']) if (s[k]) parts.push(union(s[k].map((member, i) => typeOf(member, `${at}/${k}/${i}`))));
    if (s.type !== undefined) parts.push(typeFromType(s, at));
    for (const [i, member] of (s.allOf ?? []).entries()) if (shaped(member)) parts.push(typeOf(member, `${at}/allOf/${i}`));
    if (parts.length > 1) throw new Error(`${at}: cannot type ${parts.join(' and ')} together`);
    if (parts.length === 0) {
      const left = Object.keys(s).filter((k) => !IGNORED.has(k) && k !== 'allOf');
      if (left.length > 0) throw new Error(`${at}: cannot type ${left.join(', ')} without a type`);
      return 'JsonValue';
    }
    return parts[0];
  }

  function typeFromType(s, at) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.length > 1 && types.some((t) => t === 'object' || t === 'array')) throw new Error(`${at}: cannot type ${types.join(', ')}`);
    if (types[0] === 'object') return objectType(s, at, '');
    if (types[0] === 'array') {
      const item = s.items === undefined ? 'JsonValue' : typeOf(s.items, `${at}/items`);
      return /[|&\s]/.test(item) ? `(${item})[]` : `${item}[]`;
    }
    if (s.properties !== undefined || s.items !== undefined) throw new Error(`${at}: properties or items beside type ${types.join(', ')}`);
    return union(
      types.map((t) => {
        if (!['string', 'number', 'integer', 'boolean', 'null'].includes(t)) throw new Error(`${at}: unknown type ${t}`);
        return t === 'integer' ? 'number' : t;
      }),
    );
  }

  /** An object's fields, inline (`{ a?: number }`) or, with `indent`, one per line for an interface. */
  function objectType(s, at, indent) {
    if (s.additionalProperties !== false) throw new Error(`${at}: an object must have additionalProperties: false`);
    const properties = s.properties ?? {};
    for (const name of s.required ?? []) if (!(name in properties)) throw new Error(`${at}: required ${name} has no property`);
    const required = new Set(s.required ?? []);
    const fields = Object.entries(properties).map(([name, property]) => ({
      text: `${key(name)}${required.has(name) ? '' : '?'}: ${typeOf(property, `${at}/properties/${name}`)}`,
      description: typeof property === 'object' ? property.description : undefined,
    }));
    if (indent === '') return fields.length === 0 ? 'Record<string, never>' : `{ ${fields.map((f) => f.text).join('; ')} }`;
    return fields.map((f) => (f.description ? doc(f.description, indent) : '') + `${indent}${f.text};\n`).join('');
  }

  function union(members) {
    return [...new Set(members)].join(' | ');
  }

  function declaration(name, node, at) {
    const comment = [node.title, node.description].filter(Boolean).join(': ');
    const head = comment ? doc(comment) : '';
    const flat = flatten(node, at);
    if (!flat.named && flat.schema.type === 'object' && !(flat.schema.allOf ?? []).some(shaped)) {
      for (const k of Object.keys(flat.schema)) {
        if (!IGNORED.has(k) && !SHAPE.has(k) && k !== 'allOf') throw new Error(`${at}: cannot type the keyword ${k}`);
      }
      return `${head}export interface ${name} {\n${objectType(flat.schema, at, '  ')}}\n`;
    }
    const type = typeOf(node, at);
    const line = `export type ${name} = ${type};`;
    if (line.length <= LINE_WIDTH || !type.includes(' | ')) return `${head}${line}\n`;
    return `${head}export type ${name} =\n${type
      .split(' | ')
      .map((member) => `  | ${member}`)
      .join('\n')};\n`;
  }

  const out = [
    '// Generated by scripts/generate-api-types.mjs from schemas/api/*.json and the definitions they refer to: do not\n',
    '// edit. After changing a schema, run `node scripts/generate-api-types.mjs`; a test fails while this file is stale.\n',
    '\n',
    '/** Any JSON value. */\n',
    'export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };\n',
  ];
  for (const body of bodies) refName(`${BASE}api/${body}.schema.json`, `api/${body}.schema.json`);
  // Declarations in the order their types are first met (the bodies first); writing one may meet new ones.
  const written = new Set();
  for (let pending = [...named.values()]; pending.length > 0; pending = [...named.values()].filter((n) => !written.has(n.name))) {
    for (const { name, node, at } of pending) {
      written.add(name);
      out.push('\n', declaration(name, node, at));
    }
  }
  out.push('\n/** Each request body by the name of its schema in schemas/api/. */\n', 'export interface ApiBodies {\n');
  for (const body of bodies) out.push(`  ${key(body)}: ${pascal(body)}Body;\n`);
  out.push('}\n', '\n/** The request body schemas of schemas/api/, by name. */\n');
  const list = `export const API_SCHEMAS = [${bodies.map(literal).join(', ')}] as const;`;
  out.push(
    list.length <= LINE_WIDTH
      ? `${list}\n`
      : `export const API_SCHEMAS = [\n${bodies.map((b) => `  ${literal(b)},\n`).join('')}] as const;\n`,
  );
  out.push('export type ApiSchemaName = (typeof API_SCHEMAS)[number];\n');
  return out.join('');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(path.join(root, API_TYPES_FILE), generateApiTypes(readSchemas()));
  console.log(`wrote ${API_TYPES_FILE}`);
}
