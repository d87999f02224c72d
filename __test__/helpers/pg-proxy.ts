// A TCP proxy (127.0.0.1) in front of a real PostgreSQL server that can lose one commit's answer, as a
// dropped connection or a server restart at the instant of commit does: armed with a CommandComplete tag
// ("COMMIT", "INSERT 0 6"), it forwards everything until the server sends a CommandComplete ('C') with
// that tag, withholds it and everything after it up to the next ReadyForQuery ('Z') — by then the server
// has committed — and closes both sockets. Then it forwards again. Messages from the server are
// `type (1 byte) | length (4 bytes, counting itself) | body`; the client must not ask for TLS
// (`sslmode=disable`), whose one-byte answer has no such frame.
import { createServer, connect, type Server, type Socket } from "node:net";

export interface CommitDroppingProxy {
  /** The server's URL with the proxy's host and port (and `sslmode=disable`). */
  url: string;
  /** Drops the answer of the next command whose CommandComplete tag `matches`. */
  arm(matches: (tag: string) => boolean): void;
  /** How many answers were dropped so far. */
  dropped(): number;
  close(): Promise<void>;
}

export async function commitDroppingProxy(serverUrl: string): Promise<CommitDroppingProxy> {
  const target = new URL(serverUrl);
  let armed: ((tag: string) => boolean) | undefined;
  let dropped = 0;
  const sockets = new Set<Socket>();

  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on("data", (d: Buffer) => upstream.write(d));
    let pending = Buffer.alloc(0);
    let withholding = false;
    upstream.on("data", (d: Buffer) => {
      pending = Buffer.concat([pending, d]);
      const out: Buffer[] = [];
      while (pending.length >= 5) {
        const length = pending.readUInt32BE(1);
        if (pending.length < 1 + length) break;
        const message = pending.subarray(0, 1 + length);
        pending = pending.subarray(1 + length);
        const type = String.fromCharCode(message[0]);
        if (type === "C" && armed) {
          const tag = message.subarray(5, message.length - 1).toString("utf8");
          if (armed(tag)) {
            armed = undefined;
            withholding = true;
          }
        }
        if (!withholding) {
          out.push(message);
          continue;
        }
        if (type === "Z") {
          // The commit is done on the server; its answer never reaches the client.
          dropped += 1;
          if (out.length) client.write(Buffer.concat(out));
          client.destroy();
          upstream.destroy();
          return;
        }
      }
      if (out.length) client.write(Buffer.concat(out));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no port");
  const url = new URL(serverUrl);
  url.hostname = "127.0.0.1";
  url.port = String(address.port);
  url.searchParams.set("sslmode", "disable");
  return {
    url: url.toString(),
    arm(matches) {
      armed = matches;
    },
    dropped: () => dropped,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 that nothing listens on (taken from the system, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}
