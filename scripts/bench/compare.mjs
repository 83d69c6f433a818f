#!/usr/bin/env node
// Compares benchmarks between another checkout ("before", built) and this one ("now"): each named benchmark
// runs alternately in both, N rounds, one process per run, and every figure it prints (in markdown tables, and
// on "label: figure, figure" lines) is compared. Printed per metric: the median before and now, and the ratio now/before (the median of the
// rounds' ratios, with their lowest and highest), and the load average around the runs. On a shared machine
// alternating runs is what makes the ratio meaningful: load falls on both sides alike.
//   node scripts/bench/compare.mjs --before /path/to/checkout [--now /path/to/checkout] [--rounds 3] name ...
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const USAGE = `usage: node scripts/bench/compare.mjs --before <checkout> [--now <checkout>] [--rounds N] <benchmark> ...

Runs each benchmark (a name of scripts/bench/<name>.mjs) alternately in <checkout> (built, e.g. a git worktree
of an older commit after npm ci && npm run build) and in this checkout (or the --now one, to compare two other
commits), N rounds (default 3), and prints, per figure the benchmark prints (markdown tables, "label: figure,
figure" lines), the medians before and now and the ratio now/before with its spread over the rounds. A
benchmark <checkout> does not have is reported as new, not compared. Extra environment variables (e.g.
ROUNDS=9) are passed to the benchmarks. Separate processes differ by far more than ±5 % on a shared machine,
even for the same code: for the evaluation core and server, evaluation.mjs --also and compare-eval-server.mjs
compare in the same run.`;

const thisCheckout = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function parseArgs(argv) {
  const args = { before: null, now: thisCheckout, rounds: 3, names: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--help' || argv[i] === '-h') return null;
    if (argv[i] === '--before') args.before = path.resolve(argv[++i] ?? '');
    else if (argv[i] === '--now') args.now = path.resolve(argv[++i] ?? '');
    else if (argv[i] === '--rounds') args.rounds = Number(argv[++i]);
    else args.names.push(argv[i].replace(/\.mjs$/, ''));
  }
  if (!args.before || args.names.length === 0 || !Number.isInteger(args.rounds) || args.rounds < 1) return null;
  return args;
}

/** One run of `name` in `checkout`: its output and the 1-minute load average before and after. */
function runOnce(checkout, name) {
  const loadBefore = loadavg()[0];
  const res = spawnSync(process.execPath, ['--expose-gc', path.join(checkout, 'scripts/bench', `${name}.mjs`)], {
    cwd: checkout,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (res.status !== 0) throw new Error(`${name} in ${checkout} exited with ${res.status}:\n${res.stdout}\n${res.stderr}`);
  return { output: res.stdout, load: [loadBefore, loadavg()[0]] };
}

/**
 * Every figure a benchmark prints, keyed so that the same figure has the same key in both checkouts:
 *  - in a markdown table, "title › row › column" (the title is the last line of text before the table, the row
 *    its first cell, the column its header);
 *  - on a line "label: figure, figure (figure; figure)", with figures also two spaces apart,
 *    "section › label › figure" for each figure with its number written as # ("p50 0.03 ms, p99 0.14 ms" →
 *    "… › p50 # ms", "… › p99 # ms"); the section is the last line that is not indented.
 * A cell's or a figure's first number counts ("208–275" → 208, "6,400" → 6400). Load averages and core counts
 * are the machine's, not the benchmark's: they are left out of figures and of titles.
 */
function metricsOf(output) {
  const metrics = new Map();
  const add = (key, text) => {
    const number = NUMBER.exec(text);
    if (number && !metrics.has(key)) metrics.set(key, Number(number[0].replaceAll(',', '')));
  };
  const lines = output.split('\n');
  let title = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    if (!line.startsWith('|')) {
      if (!/^\s/.test(lines[i])) title = titleOf(line);
      const colon = line.indexOf(': ');
      if (colon === -1) continue;
      const label = line.slice(0, colon);
      for (const figure of line.slice(colon + 2).split(/[,;()]\s*|\s{2,}/)) {
        const name = figure.trim().replace(NUMBER, '#');
        if (NUMBER.test(figure) && /[a-z]/i.test(name) && !MACHINE.test(figure)) add(`${title} › ${label} › ${name}`, figure);
      }
      continue;
    }
    if (!/^\|[\s:|-]+\|$/.test(lines[i + 1]?.trim() ?? '')) continue; // not a header row
    const header = cells(line);
    for (i += 2; i < lines.length && lines[i].trim().startsWith('|'); i++) {
      const row = cells(lines[i].trim());
      for (let c = 1; c < row.length; c++) add(`${title} › ${row[0]} › ${header[c] ?? c}`, row[c]);
    }
    i--;
  }
  return metrics;
}

/** A line as a section or table title: without asides, what follows a colon, and the machine's figures. */
function titleOf(line) {
  return line
    .replace(/\([^()]*\)/g, '')
    .split(/:(?:\s|$)/)[0]
    .split(/[,;]\s+/)
    .filter((part) => !MACHINE.test(part))
    .join(', ')
    .trim()
    .slice(0, 80);
}

const MACHINE = /\bload\b|\bcores?\b|\bcpus?\b/;
const NUMBER = /(?<![\w.])-?\d[\d,]*(?:\.\d+)?/;

function cells(row) {
  return row
    .slice(1, -1)
    .split('|')
    .map((cell) => cell.trim());
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toPrecision(3));
const range = (xs) => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;

function compare(before, now, name, rounds) {
  const runs = { before: [], now: [] };
  for (let round = 0; round < rounds; round++) {
    // Alternate which side goes first, so that neither always runs right after the other.
    const order = round % 2 === 0 ? ['before', 'now'] : ['now', 'before'];
    for (const side of order) {
      const run = runOnce(side === 'before' ? before : now, name);
      runs[side].push({ metrics: metricsOf(run.output), load: run.load });
      process.stderr.write(`${name}: round ${round + 1}/${rounds} ${side} done (load ${run.load.map((l) => l.toFixed(1)).join(' → ')})\n`);
    }
  }
  const loads = [...runs.before, ...runs.now].flatMap((r) => r.load);
  const rows = [];
  const keys = new Set([...runs.before[0].metrics.keys(), ...runs.now[0].metrics.keys()]);
  for (const key of keys) {
    const b = runs.before.map((r) => r.metrics.get(key));
    const n = runs.now.map((r) => r.metrics.get(key));
    if (b.some((x) => x === undefined)) {
      rows.push(`| ${name} | ${key} | (not printed) | ${fmt(median(n.filter((x) => x !== undefined)))} | new metric |`);
      continue;
    }
    if (n.some((x) => x === undefined)) {
      rows.push(`| ${name} | ${key} | ${fmt(median(b))} | (not printed) | gone |`);
      continue;
    }
    const ratios = n.map((x, i) => (b[i] === 0 ? (x === 0 ? 1 : Number.NaN) : x / b[i]));
    const r = median(ratios);
    const flag = Math.abs(r - 1) > 0.05 ? ' **outside ±5 %**' : '';
    rows.push(
      `| ${name} | ${key} | ${fmt(median(b))} | ${fmt(median(n))} | ${r.toFixed(3)} (${ratios.map((x) => x.toFixed(2)).join(', ')})${flag} |`,
    );
  }
  return { rows, load: range(loads) };
}

const args = parseArgs(process.argv.slice(2));
if (!args) {
  console.log(USAGE);
  process.exit(process.argv.includes('--help') || process.argv.includes('-h') ? 0 : 2);
}
for (const name of args.names) {
  if (!existsSync(path.join(args.now, 'scripts/bench', `${name}.mjs`))) {
    console.error(`no benchmark scripts/bench/${name}.mjs in ${args.now}`);
    process.exit(2);
  }
}
for (const name of args.names) {
  if (!existsSync(path.join(args.before, 'scripts/bench', `${name}.mjs`))) {
    console.log(`\n### ${name}: new (not in ${args.before}), not compared`);
    continue;
  }
  const { rows, load } = compare(args.before, args.now, name, args.rounds);
  console.log(`\n### ${name}: ${args.rounds} rounds, load average ${load}\n`);
  console.log('| benchmark | metric | before | now | ratio now/before (rounds) |\n|---|---|---:|---:|---|');
  for (const row of rows) console.log(row);
}
