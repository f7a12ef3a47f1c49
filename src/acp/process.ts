// The agent as a child process: its own process group (so everything it spawns can be killed),
// stdout reserved for ACP, stderr kept in a bounded ring for diagnostics.
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import type { AgentLaunch } from "./types.js";

/** Keeps the last `maxBytes` of a byte stream, cut at line starts where possible. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.maxBytes && this.chunks.length > 1) {
      const dropped = this.chunks.shift()!;
      this.size -= dropped.length;
    }
    if (this.size > this.maxBytes) {
      const only = this.chunks[0]!;
      this.chunks[0] = only.subarray(only.length - this.maxBytes);
      this.size = this.maxBytes;
    }
  }

  get byteLength(): number {
    return this.size;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }

  /** The last `lines` lines of what was kept. */
  tail(lines = 40): string {
    const all = this.text().replace(/\s+$/, "").split("\n");
    return all.slice(-lines).join("\n");
  }
}

export interface AgentProcess {
  child: ChildProcessByStdio<Writable, Readable, Readable>;
  stderr: TailBuffer;
  /** Resolves when the process has exited (never rejects). */
  exited: Promise<{ code: number | null; signal: string | null }>;
  exitInfo(): { code: number | null; signal: string | null } | null;
  /** Sends a signal to the whole process group. */
  killGroup(signal?: NodeJS.Signals): void;
  spawnError(): Error | null;
}

export function launchAgent(launch: AgentLaunch, cwd: string): AgentProcess {
  const stderr = new TailBuffer(64 * 1024);
  const child = spawn(launch.command, [...launch.args], {
    cwd: launch.cwd ?? cwd,
    env: { ...launch.env },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  let exit: { code: number | null; signal: string | null } | null = null;
  let error: Error | null = null;
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    });
    child.once("error", (err) => {
      error = err;
      exit = exit ?? { code: null, signal: null };
      resolve(exit);
    });
  });
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  // Writes after the agent died fail with EPIPE; the exit itself is what we report.
  child.stdin.on("error", () => undefined);
  return {
    child,
    stderr,
    exited,
    exitInfo: () => exit,
    spawnError: () => error,
    killGroup(signal: NodeJS.Signals = "SIGKILL") {
      killProcessGroup(child.pid, signal);
    },
  };
}

export function killProcessGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}
