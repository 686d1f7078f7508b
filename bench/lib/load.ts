// Load functions: throughput at N connections (autocannon) and sequential single-client latency
// (undici Client = one keep-alive connection, timed with process.hrtime.bigint()).
import autocannon from "autocannon";
import { Client } from "undici";
import { CHAT_PATH, requestBody, requestHeaders } from "./shared.ts";

export interface ThroughputResult {
  rps: number;
  non2xx: number;
  errors: number;
}

/** Requests/s of 2xx answers at `connections` concurrent connections, pipelining 1. */
export async function throughput(url: string, stream: boolean, seconds: number, connections = 32): Promise<ThroughputResult> {
  const r = await autocannon({
    url: url + CHAT_PATH,
    method: "POST",
    headers: requestHeaders,
    body: requestBody(stream),
    connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
  });
  return { rps: r["2xx"] / r.duration, non2xx: r.non2xx, errors: r.errors + r.timeouts };
}

export interface LatencySamples {
  /** Full request→last-byte time per request, ms. */
  total: number[];
  /** Streams only: request sent → first SSE event with a non-empty content delta, ms. */
  ttft: number[];
  /** Answers that were not 200 (or streams without content): not timed. */
  failures: number;
}

const ms = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;

/** Sends `count` requests one after another over one keep-alive connection. */
export async function sequential(url: string, stream: boolean, count: number): Promise<LatencySamples> {
  const client = new Client(url, { keepAliveTimeout: 60_000, pipelining: 1 });
  const body = requestBody(stream);
  const out: LatencySamples = { total: [], ttft: [], failures: 0 };
  try {
    for (let i = 0; i < count; i++) {
      const start = process.hrtime.bigint();
      const res = await client.request({ path: CHAT_PATH, method: "POST", headers: requestHeaders, body });
      if (res.statusCode !== 200) {
        await res.body.dump({ limit: Infinity });
        out.failures++;
        continue;
      }
      if (stream) {
        const ttft = await firstContent(res.body, start);
        if (ttft === undefined) {
          out.failures++;
          continue;
        }
        out.ttft.push(ttft);
      } else {
        await res.body.dump({ limit: Infinity });
      }
      out.total.push(ms(start));
    }
  } finally {
    await client.close();
  }
  return out;
}

/** Reads an SSE body to its end; returns ms from `start` to the first event with a content delta. */
async function firstContent(body: AsyncIterable<Buffer>, start: bigint): Promise<number | undefined> {
  let ttft: number | undefined;
  let buf = "";
  for await (const chunk of body) {
    if (ttft !== undefined) continue; // drain the rest
    buf += chunk.toString("utf8");
    let end: number;
    while (ttft === undefined && (end = buf.indexOf("\n\n")) !== -1) {
      const event = buf.slice(0, end);
      buf = buf.slice(end + 2);
      if (hasContent(event)) ttft = ms(start);
    }
  }
  return ttft;
}

function hasContent(event: string): boolean {
  if (!event.includes('"content"')) return false;
  for (const line of event.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "[DONE]") continue;
    try {
      const json = JSON.parse(data) as { choices?: { delta?: { content?: unknown } }[] };
      const c = json.choices?.[0]?.delta?.content;
      if (typeof c === "string" && c.length > 0) return true;
    } catch {
      // not JSON: not a content event
    }
  }
  return false;
}

/** One request, checked: 200 and a plausible body (content text, and [DONE] for streams). */
export async function checkOnce(url: string, stream: boolean): Promise<string | undefined> {
  const client = new Client(url);
  try {
    const res = await client.request({ path: CHAT_PATH, method: "POST", headers: requestHeaders, body: requestBody(stream) });
    const text = await res.body.text();
    if (res.statusCode !== 200) return `HTTP ${res.statusCode}: ${text.slice(0, 300)}`;
    if (stream && !text.includes("data: [DONE]")) return `stream did not end with data: [DONE]: ${text.slice(-200)}`;
    if (!text.includes("Hello")) return `answer lacks the upstream's content: ${text.slice(0, 300)}`;
    return undefined;
  } catch (err) {
    return String(err);
  } finally {
    await client.close();
  }
}
