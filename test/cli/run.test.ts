import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commands } from '../../src/apps/cli/run.js';
import { flagops, ROOT } from './cli-harness.js';

describe('the flagops command', () => {
  it('prints usage listing every subcommand on --help, exit 0', async () => {
    const result = await flagops(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: flagops <command>/);
    for (const command of commands) expect(result.stdout).toContain(`  ${command.name}`);
  });

  it('prints usage on stderr with exit 2 when no command is given', async () => {
    const result = await flagops([]);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(/^Usage: flagops/);
  });

  it('refuses an unknown command with usage on stderr, exit 2', async () => {
    const result = await flagops(['deploy']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^flagops: unknown command "deploy"\n\nUsage: flagops/);
  });

  it.each(commands.map((c) => c.name))('prints the help of %s on `<command> --help` and on `help <command>`', async (name) => {
    const help = commands.find((c) => c.name === name)!.help;
    expect(await flagops([name, '--help'])).toEqual({ code: 0, stdout: help, stderr: '' });
    expect(await flagops(['help', name])).toEqual({ code: 0, stdout: help, stderr: '' });
  });

  it('prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { version: string };
    expect(await flagops(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});
