// Turns per-round measurements into medians, ratios and target checks, and formats them as text.
import { median } from "./stats.ts";

export type TargetName = "direct" | "hono" | "raw" | "floor" | "tollgate";
export type Mode = "json" | "stream";
export const MODES: Mode[] = ["json", "stream"];

export interface Measurement {
  rps: number;
  non2xx: number;
  errors: number;
  p50: number;
  p99: number;
  ttftP50?: number;
  /** CPU cores other processes kept busy during the kept throughput / latency run. */
  foreignTput: number;
  foreignLat: number;
  /** Runs made for this slot (2 without retries). */
  attempts: number;
}
export interface RoundResult {
  order: TargetName[];
  results: Partial<Record<TargetName, Partial<Record<Mode, Measurement>>>>;
}
export interface ModeSummary {
  rps: number;
  p50: number;
  p99: number;
  ttftP50?: number;
  /** Medians over rounds of (this target's percentile − direct's percentile in the same round), ms. */
  addedP50?: number;
  addedP99?: number;
  addedTtftP50?: number;
  non2xx: number;
  errors: number;
}
export interface Summary {
  targets: Partial<Record<TargetName, Record<Mode, ModeSummary>>>;
  /** Medians over rounds of per-round throughput ratios. */
  ratios: Record<Mode, Record<string, number>>;
  goals: { name: string; value: number; limit: string; met: boolean }[];
  /** Interference from other processes: runs repeated, and kept runs still over the limit. */
  noise: { runs: number; repeated: number; keptDisturbed: number; medianForeignCores: number; foreignLimit: number };
}

const GOALS = { throughputVsHono: 0.8, addedP50: 0.5, addedP99: 2, addedTtftP50: 1 };

export function summarize(rounds: RoundResult[], names: TargetName[], foreignLimit: number): Summary {
  const get = (r: RoundResult, n: TargetName, m: Mode) => r.results[n]?.[m];
  const med = (n: TargetName, m: Mode, f: (x: Measurement, d: Measurement) => number | undefined) =>
    median(rounds.map((r) => {
      const x = get(r, n, m), d = get(r, "direct", m);
      return x && d ? (f(x, d) ?? NaN) : NaN;
    }));
  const targets: Summary["targets"] = {};
  for (const n of names) {
    const byMode = {} as Record<Mode, ModeSummary>;
    for (const m of MODES) {
      const s: ModeSummary = {
        rps: med(n, m, (x) => x.rps),
        p50: med(n, m, (x) => x.p50),
        p99: med(n, m, (x) => x.p99),
        non2xx: rounds.reduce((a, r) => a + (get(r, n, m)?.non2xx ?? 0), 0),
        errors: rounds.reduce((a, r) => a + (get(r, n, m)?.errors ?? 0), 0),
      };
      if (m === "stream") s.ttftP50 = med(n, m, (x) => x.ttftP50);
      if (n !== "direct") {
        s.addedP50 = med(n, m, (x, d) => x.p50 - d.p50);
        s.addedP99 = med(n, m, (x, d) => x.p99 - d.p99);
        if (m === "stream") s.addedTtftP50 = med(n, m, (x, d) => (x.ttftP50 ?? NaN) - (d.ttftP50 ?? NaN));
      }
      byMode[m] = s;
    }
    targets[n] = byMode;
  }
  const ratio = (a: TargetName, b: TargetName, m: Mode) =>
    median(rounds.map((r) => (get(r, a, m)?.rps ?? NaN) / (get(r, b, m)?.rps ?? NaN)));
  const ratios = {} as Summary["ratios"];
  for (const m of MODES) {
    ratios[m] = { "hono/raw": ratio("hono", "raw", m) };
    if (names.includes("floor")) ratios[m]["floor/hono"] = ratio("floor", "hono", m);
    if (names.includes("tollgate")) {
      ratios[m]["tollgate/hono"] = ratio("tollgate", "hono", m);
      ratios[m]["tollgate/raw"] = ratio("tollgate", "raw", m);
      if (names.includes("floor")) ratios[m]["tollgate/floor"] = ratio("tollgate", "floor", m);
    }
  }
  const goals: Summary["goals"] = [];
  const tg = targets.tollgate;
  if (tg) {
    for (const m of MODES) {
      const tput = ratios[m]["tollgate/hono"]!;
      goals.push({ name: `${m} throughput ÷ bare Hono`, value: tput, limit: `≥ ${GOALS.throughputVsHono}`, met: tput >= GOALS.throughputVsHono });
      goals.push({ name: `${m} added p50 ms`, value: tg[m].addedP50!, limit: `≤ ${GOALS.addedP50}`, met: tg[m].addedP50! <= GOALS.addedP50 });
      goals.push({ name: `${m} added p99 ms`, value: tg[m].addedP99!, limit: `≤ ${GOALS.addedP99}`, met: tg[m].addedP99! <= GOALS.addedP99 });
    }
    const ttft = tg.stream.addedTtftP50!;
    goals.push({ name: "stream added TTFT p50 ms", value: ttft, limit: `≤ ${GOALS.addedTtftP50}`, met: ttft <= GOALS.addedTtftP50 });
  }
  const slots = rounds.flatMap((r) => Object.values(r.results).flatMap((t) => MODES.map((m) => t![m]!)));
  const foreign = slots.flatMap((m) => [m.foreignTput, m.foreignLat]);
  const noise = {
    runs: slots.reduce((a, m) => a + m.attempts, 0),
    repeated: slots.reduce((a, m) => a + m.attempts - 2, 0),
    keptDisturbed: foreign.filter((x) => x > foreignLimit).length,
    medianForeignCores: median(foreign),
    foreignLimit,
  };
  return { targets, ratios, goals, noise };
}

const LABEL: Record<TargetName, string> = {
  direct: "upstream direct",
  hono: "bare Hono proxy",
  raw: "raw Node proxy",
  floor: "Hono + Redis floor",
  tollgate: "tollgate",
};

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
}

const f = (x: number | undefined, digits = 3) => (x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(digits));
const signed = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "–" : (x >= 0 ? "+" : "") + x.toFixed(3));

export interface ReportInput {
  settings: { rounds: number; seconds: number; requests: number; connections: number };
  tollgate: { measured: boolean; reason?: string };
  othersAtStart: { pid: number; cores: number; command: string }[];
  pinning: string;
  summary: Summary;
}

export function formatReport(r: ReportInput): string {
  const { settings: st, summary } = r;
  const out: string[] = [
    `tollgate benchmark: median of ${st.rounds} interleaved rounds; throughput at ${st.connections} connections for ${st.seconds}s; ` +
      `latency over ${st.requests} sequential requests on 1 keep-alive connection; ms; "+" = added over upstream direct in the same round`,
    `CPU pinning: ${r.pinning}`,
  ];
  for (const m of MODES) {
    const head = ["", "req/s", "p50", "p99", "+p50", "+p99", ...(m === "stream" ? ["TTFT p50", "+TTFT p50"] : []), "non-2xx", "errors"];
    const rows = [head];
    for (const [n, byMode] of Object.entries(summary.targets) as [TargetName, Record<Mode, ModeSummary>][]) {
      const s = byMode[m];
      rows.push([LABEL[n], f(s.rps, 0), f(s.p50), f(s.p99), signed(s.addedP50), signed(s.addedP99),
        ...(m === "stream" ? [f(s.ttftP50), signed(s.addedTtftP50)] : []), String(s.non2xx), String(s.errors)]);
    }
    out.push("", m === "json" ? "Non-streaming" : "Streaming (SSE)", table(rows));
    out.push("throughput ratios: " + Object.entries(summary.ratios[m]).map(([k, v]) => `${k} ${f(v, 2)}`).join(", "));
  }
  out.push("");
  if (!r.tollgate.measured) out.push(`tollgate was NOT measured: ${r.tollgate.reason}`);
  else out.push("targets:", ...summary.goals.map((g) => `  ${g.met ? "met   " : "MISSED"}  ${g.name}: ${f(g.value)} (${g.limit})`));
  const bad = Object.values(summary.targets).some((t) => MODES.some((m) => t![m].non2xx + t![m].errors > 0));
  if (bad) out.push("WARNING: some runs saw non-2xx answers or errors; req/s count only 2xx answers, latencies only 200s.");
  const nz = summary.noise;
  out.push(`interference: other processes used a median ${f(nz.medianForeignCores, 2)} cores during kept runs; ` +
    `${nz.repeated} of ${nz.runs} runs were repeats (limit ${nz.foreignLimit} cores); ${nz.keptDisturbed} kept runs still over the limit.`);
  for (const o of r.othersAtStart) out.push(`busy before the run: pid ${o.pid} at ${f(o.cores, 2)} cores (${o.command.slice(0, 60)})`);
  if (nz.keptDisturbed > 0) out.push("WARNING: other work on the machine overlapped some kept runs: the figures are noisier than usual.");
  return out.join("\n");
}
