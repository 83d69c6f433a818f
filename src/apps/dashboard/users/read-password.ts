import type { Readable, Writable } from 'node:stream';
import type { ReadStream } from 'node:tty';

/** The first line of a piped stdin (`printf '%s\n' "$PW" | flagops user add …`), without its line ending. */
export async function firstLine(input: Readable): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    if (text.includes('\n')) break;
  }
  const newline = text.indexOf('\n');
  return (newline < 0 ? text : text.slice(0, newline)).replace(/\r$/, '');
}

/** Asks on a terminal without echoing what is typed. Ctrl-C cancels. */
export function promptHidden(input: ReadStream, output: Writable, prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (result: () => void) => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      output.write('\n');
      result();
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') return finish(() => resolve(value));
        if (ch === '\u0003') return finish(() => reject(new Error('cancelled')));
        if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
        else value += ch;
      }
    };
    output.write(prompt);
    input.setRawMode(true);
    input.resume();
    input.on('data', onData);
  });
}

/**
 * A new password from stdin: asked twice on a terminal, or the first line of whatever is piped in. Never from
 * a command-line option, where it would land in the shell history and the process list.
 */
export async function readNewPassword(input: Readable & Partial<Pick<ReadStream, 'isTTY'>>, output: Writable): Promise<string> {
  if (!input.isTTY) return firstLine(input);
  const tty = input as ReadStream;
  const first = await promptHidden(tty, output, 'Password: ');
  const again = await promptHidden(tty, output, 'Repeat the password: ');
  if (first !== again) throw new Error('the two passwords differ; nothing was created');
  return first;
}
