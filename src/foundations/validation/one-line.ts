// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is found
const CONTROL = /[\u0000-\u001f\u007f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
const CONTROL_RUNS = /\s*[\u0000-\u001f\u007f]+\s*/g;

/** Whether `text` has a control character (a line break, a tab, NUL…): names are one line of printable text. */
export function hasControlCharacter(text: string): boolean {
  return CONTROL.test(text);
}

/**
 * `text` as one line of printable text: each run of control characters, with the spaces around it, becomes one
 * space. Names from outside (a key's, a provider's claims) go into git commit headers and trailers, where a line
 * break would forge a header and a NUL makes a commit that git hosts refuse.
 */
export function oneLine(text: string): string {
  return text.replace(CONTROL_RUNS, ' ').trim();
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** `text` with line breaks (as `\n`) and tabs, and no other control character (a NUL makes a commit git refuses). */
export function printableLines(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(CONTROL_BUT_LINES, '');
}

// C0 and C1 control characters, and the Unicode line and paragraph separators some viewers break lines at.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped
const CONTROL_ALL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with each control character written as an escape (`\n`, `\r`, `\t`, else `\uXXXX`), so it stays on
 * its line: free text an actor wrote (a kill reason) printed in a one-line-per-entry output cannot show a line
 * of its own, and a message quoting a damaged file's bytes does not garble a terminal.
 */
export function escapedControls(text: string): string {
  return text.replace(CONTROL_ALL, (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
