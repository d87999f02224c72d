// Loopback HTTP servers a suite starts: pushed onto the list this returns, each closed (its open
// connections too) after the test that started it.
import type { Server } from "node:http";
import { afterEach } from "vitest";

export function serversClosedAfterEach(): Server[] {
  const servers: Server[] = [];
  afterEach(async () => {
    while (servers.length) {
      const server = servers.pop()!;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
  return servers;
}
