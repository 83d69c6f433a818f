/**
 * A fast reader for the plain block YAML that flag files are written in (what serializeRepositoryFile
 * writes, and what people write by hand): nested mappings and sequences, one-line scalars, inline lists of
 * scalars, `[]`, `{}`, full-line comments. It gives exactly what `yaml` (YAML 1.2 core schema) would give,
 * or undefined the moment it meets anything else (anchors, tags, block scalars, multi-line or unusual
 * scalars, a syntax error...), and the caller falls back to `yaml`, which also reports errors with positions.
 * Why: `yaml` spends ~80-300 µs on a typical config, and a 10,000-flag repository has 40,000 files.
 * test/repository/fast-yaml.test.ts and test/fuzz/yaml-reader.property.test.ts check the agreement with `yaml`
 * on mutated and generated documents.
 */

class NotSimple extends Error {}
const notSimple = new NotSimple();

interface Line {
  indent: number;
  text: string;
}

// Resolution of plain scalars by the YAML 1.2 core schema, as the `yaml` package implements it.
const CORE_NULL = /^(?:~|[Nn]ull|NULL)?$/;
const CORE_BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const CORE_NUMBER = [
  /^0o[0-7]+$/,
  /^[-+]?[0-9]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
];
// The numbers read here; other spellings (hex, exponents, 007, .5, .inf) go to `yaml`.
const SIMPLE_NUMBER = /^-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?$/;

// A plain scalar made only of characters that cannot start or end anything in YAML block context.
const PLAIN_FIRST = /^[\p{L}\p{N}_/(]|^-[^\s]/u;
const PLAIN_BODY = /^[\p{L}\p{N}\p{M} _./@+()=,;'"!?%&*~$^:<>-]*$/u;
const FLOW_PLAIN_BODY = /^[\p{L}\p{N}\p{M} _./@+()=;!?%&*~$^<>-]*$/u;
const PLAIN_ASCII = /^(?:[A-Za-z0-9_/(]|-(?=\S))[A-Za-z0-9 _./@+()=,;'"!?%&*~$^:<>-]*$/;
const FLOW_PLAIN_ASCII = /^(?:[A-Za-z0-9_/(]|-(?=\S))[A-Za-z0-9 _./@+()=;!?%&*~$^<>-]*$/;
const KEY_LINE = /^([A-Za-z0-9_][A-Za-z0-9_.-]*):(?: +(.*))?$/;

// YAML's white space is the space and the tab (tabs are refused up front). JavaScript's trim() also removes
// U+00A0, U+3000 and the other Unicode spaces, which in YAML are content: `name: <U+00A0>` is that string.
function trimSpacesEnd(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x20) end--;
  return end === text.length ? text : text.slice(0, end);
}

function trimSpacesStart(text: string): string {
  let start = 0;
  while (start < text.length && text.charCodeAt(start) === 0x20) start++;
  return start === 0 ? text : text.slice(start);
}

function resolvePlain(text: string, flow: boolean): unknown {
  // The ASCII test first: it is several times faster than the Unicode one and covers nearly every value.
  const allowed = flow
    ? FLOW_PLAIN_ASCII.test(text) || (PLAIN_FIRST.test(text) && FLOW_PLAIN_BODY.test(text))
    : PLAIN_ASCII.test(text) || (PLAIN_FIRST.test(text) && PLAIN_BODY.test(text));
  if (!allowed || text.includes(': ') || text.endsWith(':') || text.endsWith(' ')) throw notSimple;
  const first = text.charCodeAt(0);
  // Only these first characters can begin a null, a boolean or a number in the core schema.
  if (first === 0x6e || first === 0x4e) return CORE_NULL.test(text) ? null : text; // n N
  if (first === 0x74 || first === 0x54 || first === 0x66 || first === 0x46)
    return CORE_BOOL.test(text) ? first === 0x74 || first === 0x54 : text; // t T f F
  if ((first >= 0x30 && first <= 0x39) || first === 0x2d) {
    if (CORE_NUMBER.some((re) => re.test(text))) {
      if (!SIMPLE_NUMBER.test(text)) throw notSimple;
      return Number(text);
    }
  }
  return text;
}

/** A quoted scalar starting at text[start]; returns the string and the index after its closing quote. */
function readQuoted(text: string, start: number): [string, number] {
  const quote = text[start];
  let i = start + 1;
  if (quote === "'") {
    let out = '';
    for (;;) {
      const close = text.indexOf("'", i);
      if (close === -1) throw notSimple;
      out += text.slice(i, close);
      if (text[close + 1] !== "'") return [out, close + 1];
      out += "'";
      i = close + 2;
    }
  }
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  if (i >= text.length) throw notSimple;
  // JSON's escapes are a subset of YAML's double-quoted ones, with the same meaning: JSON.parse reads
  // them, and refuses the YAML-only ones (\x41, \e, a line continuation), which go to `yaml`.
  try {
    return [JSON.parse(`"${text.slice(start + 1, i)}"`) as string, i + 1];
  } catch {
    throw notSimple;
  }
}

function readFlowList(text: string): unknown[] {
  const items: unknown[] = [];
  let i = 1;
  const skipSpaces = () => {
    while (text[i] === ' ') i++;
  };
  skipSpaces();
  if (text[i] === ']') {
    i++;
  } else {
    for (;;) {
      skipSpaces();
      if (text[i] === '"' || text[i] === "'") {
        const [value, next] = readQuoted(text, i);
        items.push(value);
        i = next;
      } else {
        let end = i;
        while (end < text.length && text[end] !== ',' && text[end] !== ']') end++;
        items.push(resolvePlain(trimSpacesEnd(text.slice(i, end)), true));
        i = end;
      }
      skipSpaces();
      if (text[i] === ']') {
        i++;
        break;
      }
      if (text[i] !== ',') throw notSimple;
      i++;
    }
  }
  if (i !== text.length) throw notSimple;
  return items;
}

function readInline(text: string): unknown {
  const first = text[0];
  if (first === '"' || first === "'") {
    const [value, end] = readQuoted(text, 0);
    if (end !== text.length) throw notSimple;
    return value;
  }
  if (first === '[') return readFlowList(text);
  if (text === '{}') return {};
  return resolvePlain(text, false);
}

class Reader {
  pos = 0;

  constructor(private readonly lines: Line[]) {}

  private isItem(line: Line | undefined, indent: number): boolean {
    return line !== undefined && line.indent === indent && (line.text === '-' || line.text.startsWith('- '));
  }

  node(): unknown {
    const line = this.lines[this.pos];
    return this.isItem(line, line.indent) ? this.sequence(line.indent) : this.mapping(line.indent);
  }

  private mapping(indent: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    while (this.pos < this.lines.length && this.lines[this.pos].indent === indent) {
      const m = KEY_LINE.exec(this.lines[this.pos].text);
      if (!m) throw notSimple;
      const key = m[1];
      // Keys `yaml` would read as null, a boolean or a number, and duplicates, are its business.
      if (key === '__proto__' || resolvePlain(key, false) !== key || Object.hasOwn(out, key)) throw notSimple;
      this.pos++;
      const next = this.lines[this.pos];
      if (m[2] !== undefined) out[key] = readInline(m[2]);
      else if (next !== undefined && next.indent > indent) out[key] = this.node();
      else if (this.isItem(next, indent)) out[key] = this.sequence(indent);
      else out[key] = null;
    }
    return out;
  }

  private sequence(indent: number): unknown[] {
    const out: unknown[] = [];
    while (this.isItem(this.lines[this.pos], indent)) {
      const line = this.lines[this.pos];
      const rest = line.text.slice(1);
      const content = trimSpacesStart(rest);
      if (content === '' || content.startsWith('-')) throw notSimple;
      if (KEY_LINE.test(content)) {
        // `- key: value` opens a mapping whose keys sit at the column of `key`.
        const column = indent + 1 + (rest.length - content.length);
        this.lines[this.pos] = { indent: column, text: content };
        out.push(this.mapping(column));
      } else {
        out.push(readInline(content));
        this.pos++;
      }
      const next = this.lines[this.pos];
      if (next !== undefined && next.indent > indent && !this.isItem(next, indent)) throw notSimple;
    }
    return out;
  }
}

/** The value `yaml` would read from `text`, or undefined when `text` is not in the simple subset. */
export function readSimpleYaml(text: string): unknown {
  // Tabs, CR, BOM and other control or line-separator characters: rare, and subtle in YAML.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  if (/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\uFEFF]/.test(text)) return undefined;
  const lines: Line[] = [];
  for (const raw of text.split('\n')) {
    const content = trimSpacesEnd(raw);
    const body = trimSpacesStart(content);
    if (body === '' || body[0] === '#') continue;
    // Directives and document markers.
    if (content.startsWith('%') || content.startsWith('---') || content.startsWith('...')) return undefined;
    lines.push({ indent: content.length - body.length, text: body });
  }
  if (lines.length === 0) return null;
  if (lines[0].indent !== 0) return undefined;
  const reader = new Reader(lines);
  try {
    const value = reader.node();
    return reader.pos === lines.length ? value : undefined;
  } catch (err) {
    if (err instanceof NotSimple) return undefined;
    throw err;
  }
}
