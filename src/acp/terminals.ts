// Terminals the agent asked for: real child processes in their own process groups, with the
// agent's environment, retained output capped by dropping the oldest bytes.
import { type ChildProcess, spawn } from "node:child_process";
import { killProcessGroup } from "./process.js";

export interface TerminalSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  outputByteLimit: number;
}

export interface TerminalExit {
  exitCode: number | null;
  signal: string | null;
}

/** Output ring that keeps the newest `limit` bytes and never splits a UTF-8 character. */
class OutputBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size <= this.limit) return;
    this.truncated = true;
    while (this.chunks.length > 1 && this.size - this.chunks[0]!.length >= this.limit) {
      this.size -= this.chunks.shift()!.length;
    }
    if (this.size > this.limit) {
      const joined = Buffer.concat(this.chunks);
      let start = joined.length - this.limit;
      // Skip UTF-8 continuation bytes so the kept text starts on a character boundary.
      while (start < joined.length && (joined[start]! & 0xc0) === 0x80) start++;
      this.chunks = [joined.subarray(start)];
      this.size = joined.length - start;
    }
  }

  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}

export class Terminal {
  readonly child: ChildProcess;
  private readonly output: OutputBuffer;
  private exitInfo: TerminalExit | null = null;
  readonly exited: Promise<TerminalExit>;
  totalBytes = 0;

  constructor(spec: TerminalSpec) {
    this.output = new OutputBuffer(spec.outputByteLimit);
    this.child = spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      env: { ...spec.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const onData = (chunk: Buffer) => {
      this.totalBytes += chunk.length;
      this.output.push(chunk);
    };
    this.child.stdout?.on("data", onData);
    this.child.stderr?.on("data", onData);
    this.exited = new Promise<TerminalExit>((resolve) => {
      // "close" waits for the output pipes to drain, so the final output is complete.
      this.child.once("close", (code, signal) => {
        this.exitInfo = { exitCode: code, signal };
        resolve(this.exitInfo);
      });
      this.child.once("error", (error) => {
        this.output.push(Buffer.from(`${error.message}\n`));
        this.exitInfo = { exitCode: 127, signal: null };
        resolve(this.exitInfo);
      });
    });
  }

  snapshot(): { output: string; truncated: boolean; exitStatus: TerminalExit | null } {
    return { output: this.output.text(), truncated: this.output.truncated, exitStatus: this.exitInfo };
  }

  kill(): void {
    if (this.exitInfo === null) killProcessGroup(this.child.pid, "SIGKILL");
  }
}

export class TerminalRegistry {
  private readonly terminals = new Map<string, Terminal>();
  private next = 1;

  create(spec: TerminalSpec): string {
    const id = `term-${this.next++}`;
    this.terminals.set(id, new Terminal(spec));
    return id;
  }

  get(id: string): Terminal | undefined {
    return this.terminals.get(id);
  }

  release(id: string): boolean {
    const terminal = this.terminals.get(id);
    if (!terminal) return false;
    terminal.kill();
    this.terminals.delete(id);
    return true;
  }

  killAll(): void {
    for (const terminal of this.terminals.values()) terminal.kill();
  }

  get size(): number {
    return this.terminals.size;
  }
}

/** Joins a command and its arguments the way a POSIX shell would read them back. */
export function shellJoin(command: string, args: readonly string[]): string {
  return [command, ...args].map(shellQuote).join(" ");
}

function shellQuote(word: string): string {
  if (word.length > 0 && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
