// The training batch section (bench/training.sh): the raw cells → OUT/training.json and a
// markdown section OUT/training.md with issue 34's targets judged on the medians of the
// per-repetition ratios (one lanced cell beside one nginx cell, run back to back).
//   node bench/training-report.mjs CELLS OUT ANSWER_BYTES FORMAT
import fs from 'node:fs';
import path from 'node:path';

const [cellsPath, out, answerBytes, fmt] = process.argv.slice(2);
const lines = fs.readFileSync(cellsPath, 'utf8').trim().split('\n').filter(Boolean).map((l) => l.split(' '));
const median = (v) => { const s = [...v].sort((a, b) => a - b); return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN; };
const byRep = (kind, col = 2) => Object.fromEntries(lines.filter((l) => l[0] === kind).map((l) => [l[1], +l[col]]));
const lanced = byRep('lanced'), nginx = byRep('nginx'), loader = byRep('loader'), load256 = byRep('load256'), bare = byRep('bare');
const inproc = lines.find((l) => l[0] === 'inproc');
const errors = lines.filter((l) => (l[0] === 'lanced' || l[0] === 'load256') && +l[3] > 0).length;
// nginx's requests/s of the saved batch-100 answer, as rows/s.
const nginxRows = Object.fromEntries(Object.entries(nginx).map(([k, v]) => [k, v * 100]));
const pairs = Object.keys(lanced).filter((k) => nginxRows[k] > 0).map((k) => lanced[k] / nginxRows[k]);
const loaderPairs = Object.keys(loader).filter((k) => load256[k] > 0).map((k) => loader[k] / load256[k]);
const barePairs = Object.keys(bare).filter((k) => load256[k] > 0).map((k) => bare[k] / load256[k]);
const R = {
  answer_bytes: +answerBytes, format: fmt,
  lanced_rows_per_s: Object.values(lanced), nginx_rows_per_s: Object.values(nginxRows),
  lanced_vs_nginx: pairs, lanced_vs_nginx_median: median(pairs),
  lancedb_inproc_rows_per_s: inproc ? +inproc[1] : null,
  lanced_vs_lancedb: inproc ? median(Object.values(lanced)) / +inproc[1] : null,
  loader_rows_per_s: Object.values(loader), load256_rows_per_s: Object.values(load256),
  loader_vs_load: loaderPairs, loader_vs_load_median: median(loaderPairs),
  bare_rows_per_s: Object.values(bare), bare_vs_load: barePairs, bare_vs_load_median: median(barePairs),
  cells_with_errors: errors,
};
fs.writeFileSync(path.join(out, 'training.json'), JSON.stringify(R, null, 1) + '\n');

const f0 = (x) => (x == null || Number.isNaN(x) ? '—' : Math.round(x).toLocaleString('en-US'));
const f2 = (x) => (x == null || Number.isNaN(x) ? '—' : x.toFixed(2));
const verdict = (v, target) => (Number.isNaN(v) || v == null ? 'not measured' : v >= target ? `meets ≥ ${target}x` : `misses ≥ ${target}x`);
const md = [];
md.push('## The training batch (issue 34)', '');
md.push(`Training table (id, label, caption, 768-d float32 embedding, list<int32> tokens, 8–32 KiB image), warm page cache, \`--io-mode buffered\`; a batch-100 Arrow answer is ${f0(+answerBytes)} bytes. Ratios are per back-to-back pair; the verdict takes their median.`, '');
md.push('| what | figures | ratio | target |', '|---|---|---|---|');
md.push(`| lanced batch 100 Arrow, 4 connections, vs nginx sending the same answer (sendfile), 4 connections | ${Object.values(lanced).map(f0).join(' / ')} vs ${Object.values(nginxRows).map(f0).join(' / ')} rows/s | ${pairs.map(f2).join(' / ')} (median ${f2(median(pairs))}) | ${verdict(median(pairs), 0.8)} |`);
md.push(`| lanced batch 100 Arrow vs LanceDB in-process takeOffsets batch 100, 4 in flight | ${f0(median(Object.values(lanced)))} vs ${f0(R.lancedb_inproc_rows_per_s)} rows/s | ${f2(R.lanced_vs_lancedb)} | ${verdict(R.lanced_vs_lancedb, 5)} |`);
md.push(`| DataLoader (2 workers, batch 256, all columns, shuffled) vs lanced-load (batch 256, 2 connections, ${fmt}) | ${Object.values(loader).map(f0).join(' / ')} vs ${Object.values(load256).map(f0).join(' / ')} rows/s | ${loaderPairs.map(f2).join(' / ')} (median ${f2(median(loaderPairs))}) | ${verdict(median(loaderPairs), 0.8)} |`);
if (barePairs.length) md.push(`| the same reads without DataLoader: 2 processes, each its shard (\`batches()\` read in the process) vs lanced-load as above | ${Object.values(bare).map(f0).join(' / ')} vs ${Object.values(load256).map(f0).join(' / ')} rows/s | ${barePairs.map(f2).join(' / ')} (median ${f2(median(barePairs))}) | — (the DataLoader's hand-over is the difference) |`);
if (errors) md.push('', `**${errors} lanced cell(s) had errors**: their figures are not valid.`);
fs.writeFileSync(path.join(out, 'training.md'), md.join('\n') + '\n');
process.stdout.write(md.join('\n') + '\n');
