#!/usr/bin/env node
// Compare two `make bench` runs cell by cell: node bench/compare.mjs BEFORE/results.json AFTER/results.json
// [--only lanced,lancectl] [--below 0.85]
// Cells are matched on everything that names them (system, dataset, batch, connections, format,
// io mode, cold, columns, load fraction); the figure compared is rows/s (requests/s for the
// static server, IOPS for fio). Prints the ratio after/before per system (geometric mean, min,
// max, cells compared) and every cell below --below. Cells marked disturbed or failed in either
// run are left out and counted. Run it on two runs of the same build too: that spread is the
// noise a before/after difference has to exceed on this machine.
import fs from "node:fs";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const only = opt("--only", "lanced,lancectl").split(",");
const below = Number(opt("--below", "0.85"));
if (args.length !== 2) {
  console.error("usage: node bench/compare.mjs BEFORE/results.json AFTER/results.json [--only systems] [--below ratio]");
  process.exit(2);
}
const NAMING = ["system", "dataset", "bs", "depth", "batch", "conc", "format", "io_mode", "io", "cold", "columns", "load_fraction"];
// Only the names a cell has: "server" is a name for static cells, the daemon's metrics for lanced's.
const keyOf = (c) =>
  NAMING.concat(typeof c.server === "string" ? ["server"] : [])
    .filter((k) => c[k] !== undefined)
    .map((k) => `${k}=${c[k]}`)
    .join(" ");
const figure = (c) => (c.system === "fio" ? c.iops : c.system === "static" ? c.requests_per_s : c.rows_per_s);
const usable = (c) => !c.error && !c.disturbed && figure(c) > 0;

function load(path) {
  const cells = JSON.parse(fs.readFileSync(path, "utf8")).cells;
  const byKey = new Map();
  // A key seen twice (a section re-run) keeps its last cell, as the report does.
  for (const c of cells) if (only.includes(c.system)) byKey.set(keyOf(c), c);
  return byKey;
}

const before = load(args[0]);
const after = load(args[1]);
const per = new Map();
const slow = [];
let skipped = 0;
for (const [k, a] of after) {
  const b = before.get(k);
  if (!b) continue;
  if (!usable(a) || !usable(b)) {
    skipped++;
    continue;
  }
  const r = figure(a) / figure(b);
  if (!per.has(a.system)) per.set(a.system, []);
  per.get(a.system).push(r);
  if (r < below) slow.push([r, k, figure(b), figure(a)]);
}
const fmt = (x) => x.toFixed(2);
console.log("| system | cells | geometric mean after/before | min | max |");
console.log("| --- | --- | --- | --- | --- |");
for (const [sys, rs] of per) {
  const gm = Math.exp(rs.reduce((s, r) => s + Math.log(r), 0) / rs.length);
  console.log(`| ${sys} | ${rs.length} | ${fmt(gm)} | ${fmt(Math.min(...rs))} | ${fmt(Math.max(...rs))} |`);
}
console.log(`\n${skipped} cell(s) left out (disturbed or failed in either run).`);
if (slow.length) {
  console.log(`\nCells below ${below}x:`);
  for (const [r, k, b, a] of slow.sort((x, y) => x[0] - y[0])) console.log(`  ${fmt(r)}x  ${k}  (${Math.round(b)} -> ${Math.round(a)})`);
}
