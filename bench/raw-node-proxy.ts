// Baseline 2, the limit of Node: raw node:http piping bytes to the upstream through a keep-alive
// http.Agent. No parsing, no auth, no routing. Usage: tsx bench/raw-node-proxy.ts <port> <upstream origin>
import http from "node:http";
import { announce, portFromArgs, upstreamFromArgs } from "./lib/shared.ts";

const upstream = upstreamFromArgs();
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

const server = http.createServer((req, res) => {
  const headers: http.OutgoingHttpHeaders = { "content-type": req.headers["content-type"] ?? "application/json" };
  if (req.headers["content-length"]) headers["content-length"] = req.headers["content-length"];
  const up = http.request(
    { agent, host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
    (upRes) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const h of ["content-type", "content-length", "cache-control"]) {
        if (upRes.headers[h] !== undefined) out[h] = upRes.headers[h];
      }
      res.writeHead(upRes.statusCode ?? 502, out);
      upRes.pipe(res);
    },
  );
  up.on("error", () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(up);
});
server.keepAliveTimeout = 60_000;
server.listen(portFromArgs(), "127.0.0.1", () => {
  announce({ type: "ready", port: (server.address() as { port: number }).port });
});
