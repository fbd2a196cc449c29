/**
 * From the raw results of every repetition to one table of medians, the
 * Pail/baseline ratios and the targets; printed, and written as JSON.
 *
 *   node bench/report.mjs [results.json]            re-prints the table of a saved run
 *   node bench/report.mjs [results.json] --readme   also puts it into bench/README.md
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib.mjs';
import { transferGrowthMiB } from './workloads.mjs';

/** What W1–W4 do, for the tables (also compare.mjs's). */
export const WHAT = {
  W1: 'GET 4 KiB, public bucket, 64 conn',
  W2: 'GET 4 KiB, private + API key, 64 conn',
  W3: 'HEAD + API key, 64 conn',
  W4: 'PUT distinct 4 KiB + API key, 32 conn',
};

/** W2's and W4's other doors, each set against the same workload with a key: its workload and case variant, what it is, and the ratio it should reach (null: none). */
export const DOORS = [
  { workload: 'W2', variant: 'signed', what: 'GET 4 KiB, private, through a signed url, 64 conn', section: 'Signed urls vs API keys (signed/keyed)', min: 0.9 },
  { workload: 'W2', variant: 's3', what: 'GET 4 KiB, private, presigned S3 GetObject, 64 conn', section: 'The S3 API vs the Pail API (s3/keyed)', min: 0.9 },
  {
    workload: 'W4',
    variant: 's3',
    what: 'PUT distinct 4 KiB, S3 PutObject signed in its Authorization header (signed payload), 32 conn',
    section: 'The S3 API vs the Pail API (s3/keyed)',
    min: 0.9,
  },
  // Issue 37: the same requests in a versioned bucket.
  {
    workload: 'W2',
    variant: 'versioned',
    what: 'GET 4 KiB, the current of 3 versions, versioned bucket + API key, 64 conn',
    section: 'A versioned bucket vs an unversioned one (versioned/unversioned)',
    min: 0.9,
  },
  {
    workload: 'W4',
    variant: 'versioned',
    what: 'PUT distinct 4 KiB into a versioned bucket + API key, 32 conn',
    section: 'A versioned bucket vs an unversioned one (versioned/unversioned)',
    min: 0.9,
  },
];

/** Median of one field over a case's repetitions. */
function med(runs, caseId, pick) {
  const list = runs[caseId];
  if (!list || list.length === 0) return null;
  return median(list.map(pick));
}

export const fmt = (value, digits = 0) => {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
};

/**
 * Rows of the table. Each: { section, workload, what, unit, pail, reference, referenceLabel,
 * ratio, ratioLabel, target, pass }. `pass` is null where there is nothing to judge.
 */
export function buildRows(results) {
  const runs = results.runs;
  const rows = [];
  const rps = (id) => med(runs, id, (r) => r.rps);
  const allRps = (id) => med(runs, id, (r) => r.allRps);
  const p = (id, q) => med(runs, id, (r) => r.latency?.[q]);
  const atLeast = (ratio, min) => (ratio === null ? null : ratio >= min);
  const ratioOf = (a, b) => (a === null || b === null || b === 0 ? null : a / b);

  const main = 'Pail vs bare Node (Pail/baseline, higher is better)';
  const targets = { W1: 1.5, W2: 1.3, W3: 0.8, W4: 0.8 };
  const what = WHAT;
  for (const w of ['W1', 'W2', 'W3', 'W4']) {
    const pail = rps(`${w}/pail`);
    const base = rps(`${w}/baseline`);
    const ratio = ratioOf(pail, base);
    rows.push({
      section: main,
      workload: w,
      what: what[w],
      unit: 'req/s',
      pail,
      reference: base,
      ratio,
      target: `≥ ${targets[w]}`,
      pass: atLeast(ratio, targets[w]),
    });
  }
  const stream = results.stream ?? {};
  const size = results.settings?.streamBytes;
  const sizeLabel = size ? (size >= 1024 ** 3 ? `${size / 1024 ** 3} GiB` : `${size / 1024 ** 2} MiB`) : '';
  for (const [w, dir, min] of [
    ['W5', 'upload', 0.9],
    ['W6', 'download', 0.8],
  ]) {
    const pail = median((stream[`${dir}/pail`] ?? []).map((r) => r.mbps));
    const base = median((stream[`${dir}/baseline`] ?? []).map((r) => r.mbps));
    const ratio = ratioOf(pail, base);
    rows.push({
      section: main,
      workload: w,
      what: `${dir} one ${sizeLabel} file`,
      unit: 'MB/s',
      pail,
      reference: base,
      ratio,
      target: `≥ ${min}`,
      pass: atLeast(ratio, min),
    });
    const growth = median((stream[`${dir}/pail`] ?? []).map(transferGrowthMiB));
    const baseGrowth = median((stream[`${dir}/baseline`] ?? []).map(transferGrowthMiB));
    rows.push({
      section: main,
      workload: w,
      what: `server peak RSS above idle during ${dir}`,
      unit: 'MiB',
      pail: growth,
      reference: baseGrowth,
      ratio: null,
      target: '≤ 32 MiB',
      pass: growth === null ? null : growth <= 32,
      digits: 1,
    });
  }
  const w7 = (id) => ({ p50: p(id, 'p50'), p99: p(id, 'p99') });
  const w7p = w7('W7/pail');
  const w7b = w7('W7/baseline');
  rows.push({
    section: main,
    workload: 'W7',
    what: 'list first 1000 of 10,000, 1 client: p50',
    unit: 'ms',
    pail: w7p.p50,
    reference: w7b.p50,
    ratio: ratioOf(w7b.p50, w7p.p50),
    target: 'p50 ≈ 20 ms',
    pass: null,
    digits: 1,
  });
  rows.push({
    section: main,
    workload: 'W7',
    what: 'list first 1000 of 10,000, 1 client: p99',
    unit: 'ms',
    pail: w7p.p99,
    reference: w7b.p99,
    ratio: ratioOf(w7b.p99, w7p.p99),
    target: '≤ 20 ms',
    pass: w7p.p99 === null ? null : w7p.p99 <= 20,
    digits: 1,
  });

  for (const door of DOORS) {
    if (!runs[`${door.workload}/${door.variant}`]) continue;
    const through = rps(`${door.workload}/${door.variant}`);
    const keyed = rps(`${door.workload}/pail`);
    const ratio = ratioOf(through, keyed);
    rows.push({
      section: door.section,
      workload: door.workload,
      what: door.what,
      unit: 'req/s',
      pail: through,
      reference: keyed,
      ratio,
      target: door.min === null ? '–' : `≥ ${door.min}`,
      pass: door.min === null ? null : atLeast(ratio, door.min),
    });
  }

  const bigN = results.settings?.bigFiles ?? 100_000;
  const scale = `Scaling: bucket holding ${bigN.toLocaleString('en-US')} files vs an empty one (big/empty)`;
  for (const w of ['W2', 'W4']) {
    const big = rps(`${w}/big`);
    const empty = rps(`${w}/pail`);
    const ratio = ratioOf(big, empty);
    rows.push({
      section: scale,
      workload: w,
      what: `${what[w]}, ${bigN.toLocaleString('en-US')}-file bucket`,
      unit: 'req/s',
      pail: big,
      reference: empty,
      ratio,
      target: '≥ 0.9',
      pass: atLeast(ratio, 0.9),
    });
  }
  const first = w7('W7/big-first');
  const late = w7('W7/big-late');
  rows.push({
    section: scale,
    workload: 'W7',
    what: `first page of ${bigN.toLocaleString('en-US')}: p99 (ref: p99 of the 10,000-file bucket)`,
    unit: 'ms',
    pail: first.p99,
    reference: w7p.p99,
    ratio: ratioOf(w7p.p99, first.p99),
    target: '≤ 20 ms',
    pass: first.p99 === null ? null : first.p99 <= 20,
    digits: 1,
  });
  rows.push({
    section: scale,
    workload: 'W7',
    what: `late page (${results.latePage ?? '?'}) of ${bigN.toLocaleString('en-US')}: p99 (ref: first page)`,
    unit: 'ms',
    pail: late.p99,
    reference: first.p99,
    ratio: ratioOf(first.p99, late.p99),
    target: '≤ 20 ms',
    pass: late.p99 === null ? null : late.p99 <= 20,
    digits: 1,
  });

  const pgSection = 'PostgreSQL + Redis vs SQLite (pg/sqlite)';
  if (runs['W2/pg']) {
    for (const w of ['W2', 'W4']) {
      const pg = rps(`${w}/pg`);
      const sqlite = rps(`${w}/pail`);
      const ratio = ratioOf(pg, sqlite);
      rows.push({
        section: pgSection,
        workload: w,
        what: `${what[w]}, PostgreSQL + Redis`,
        unit: 'req/s',
        pail: pg,
        reference: sqlite,
        ratio,
        target: '≥ 0.5',
        pass: atLeast(ratio, 0.5),
      });
    }
  } else {
    rows.push({
      section: pgSection,
      workload: 'W2/W4',
      what: `skipped: ${results.skipped?.pg ?? 'not run'}`,
      unit: '',
      pail: null,
      reference: null,
      ratio: null,
      target: '≥ 0.5',
      pass: null,
    });
  }

  const limSection = 'Real per-plan limits (free plan; answers/s incl. 429, vs baseline)';
  if (runs['W1/limits']) {
    for (const w of ['W1', 'W2', 'W3', 'W4']) {
      const all = allRps(`${w}/limits`);
      const ok = med(runs, `${w}/limits`, (r) => r.ok);
      const base = rps(`${w}/baseline`);
      rows.push({
        section: limSection,
        workload: w,
        what: `${what[w]} (${fmt(ok)} × 2xx per run)`,
        unit: 'answers/s',
        pail: all,
        reference: base,
        ratio: ratioOf(all, base),
        target: 'info',
        pass: null,
      });
    }
  }
  return rows;
}

export function renderTable(results) {
  const rows = buildRows(results);
  const lines = [];
  let section = null;
  const header = '| Workload | What | Unit | Pail | Reference | Ratio | Target | Met |';
  const rule = '|---|---|---|---:|---:|---:|---|---|';
  for (const row of rows) {
    if (row.section !== section) {
      if (section !== null) lines.push('');
      section = row.section;
      lines.push(`**${section}**`, '', header, rule);
    }
    const digits = row.digits ?? 0;
    const met = row.pass === null ? '' : row.pass ? 'yes' : '**no**';
    lines.push(
      `| ${row.workload} | ${row.what} | ${row.unit} | ${fmt(row.pail, digits)} | ${fmt(row.reference, digits)} | ${fmt(row.ratio, 2)} | ${row.target} | ${met} |`,
    );
  }
  return lines.join('\n');
}

export function renderHeader(results) {
  const m = results.machine ?? {};
  const load = (l) => (l ? l.map((x) => x.toFixed(2)).join(' ') : '?');
  return [
    `Pail benchmark, ${results.quick ? 'QUICK (not for comparison)' : 'full run'}, ${results.startedAt} → ${results.finishedAt ?? '?'}`,
    `commit ${results.git?.commit ?? '?'}${results.git?.dirty ? ' (+ uncommitted changes)' : ''}; node ${m.node}; ${m.cpus} × ${m.model}; server on core ${m.serverCore}, load on core ${m.loadCore}${m.taskset ? '' : ' (taskset missing: NOT pinned)'}`,
    `${results.settings.reps} repetitions, interleaved, ${results.settings.duration} s each (W7 ${results.settings.latencyDuration} s, real limits ${results.settings.limitsDuration} s); medians. Load average at start ${load(m.loadavgStart)}, at end ${load(m.loadavgEnd)}.`,
  ].join('\n');
}

export function writeResults(results, file) {
  results.rows = buildRows(results);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
}

/** Replaces the table between the bench:table markers of bench/README.md. */
export function updateReadme(results, readme) {
  const text = fs.readFileSync(readme, 'utf8');
  const start = '<!-- bench:table -->';
  const end = '<!-- /bench:table -->';
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${readme} has no ${start} … ${end} markers`);
  const header = renderHeader(results).split('\n').join('  \n');
  const block = `${start}\n${header}\n\n${renderTable(results)}\n${end}`;
  fs.writeFileSync(readme, text.slice(0, from) + block + text.slice(to + end.length));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--')) ?? path.join(here, 'results/latest.json');
  const results = JSON.parse(fs.readFileSync(file, 'utf8'));
  console.log(renderHeader(results));
  console.log();
  console.log(renderTable(results));
  if (args.includes('--readme')) {
    updateReadme(results, path.join(here, 'README.md'));
    console.log('\nbench/README.md updated');
  }
}
