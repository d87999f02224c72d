// The crash proofs' way to stop a worker at an exact point: the child script writes the name of each
// point to stdout as it reaches it (then blocks), and is killed there with SIGKILL.
import { spawn } from "node:child_process";

/**
 * Runs `node script ...args point` and kills it with SIGKILL once it reports `point`. Resolves when it
 * has died that way; rejects if it exits by itself first.
 */
export function killAt(script: string, args: string[], point: string, env?: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [script, ...args, point], { env, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes(point)) p.kill("SIGKILL");
    });
    p.on("exit", (code, signal) => (signal === "SIGKILL" ? resolve() : reject(new Error(`child exited ${code} before ${point}: ${out}`))));
  });
}
