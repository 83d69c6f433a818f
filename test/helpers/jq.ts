import { execFileSync } from 'node:child_process';

/** Why the tests of the GitHub Actions recipe (which uses jq) do not run here, or null when they do. */
export const JQ_MISSING: string | null = (() => {
  try {
    execFileSync('jq', ['--version'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'the GitHub Actions recipe of docs/code-references.md was not run: it needs jq (Debian: apt-get install -y jq)';
  }
})();
