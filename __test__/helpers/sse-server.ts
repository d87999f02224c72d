// A real HTTP server on 127.0.0.1 that answers each POST with the next scripted reply: a status, headers,
// and body pieces written one by one, then an end, a cut connection, or a stall that never ends.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { onTestFinished } from "vitest";

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  chunks: string[];
  end?: "end" | "destroy" | "stall";
}

export interface Recorded {
  url: string;
  headers: IncomingMessage["headers"];
  body: any;
}

export async function startServer(replies: Reply[]) {
  const requests: Recorded[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (raw += c));
    req.on("end", async () => {
      requests.push({ url: req.url ?? "", headers: req.headers, body: raw ? JSON.parse(raw) : undefined });
      const reply = replies[requests.length - 1];
      if (!reply) {
        res.writeHead(599, { "content-type": "text/plain" }).end("no scripted reply");
        return;
      }
      open.add(res);
      res.on("close", () => open.delete(res));
      res.writeHead(reply.status ?? 200, { "content-type": "text/event-stream", ...reply.headers });
      for (const chunk of reply.chunks) {
        res.write(chunk);
        // Let each piece leave as its own TCP write so the client sees split events.
        await new Promise((r) => setImmediate(r));
      }
      if ((reply.end ?? "end") === "end") res.end();
      else if (reply.end === "destroy") res.socket?.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      for (const res of open) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `startServer`, closed when the running test finishes (call it inside a test). */
export async function serveForTest(replies: Reply[]) {
  const server = await startServer(replies);
  onTestFinished(() => server.close());
  return server;
}

export const sse = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
