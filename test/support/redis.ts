// A throwaway redis-server (Debian's package) on a free loopback port, no persistence, own temp dir.
import { type ChildProcess, spawn } from "node:child_process";
import { access, constants, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RedisServer {
  readonly url: string;
  stop(): Promise<void>;
}

const candidates = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"];

async function findRedisServer(): Promise<string> {
  for (const path of candidates) {
    try {
      await access(path, constants.X_OK);
      return path;
    } catch {
      // next
    }
  }
  throw new Error(
    `redis-server not found (looked at ${candidates.join(", ")}). The BullMQ tests need a real Redis: ` +
      "install Debian's package (`apt-get install redis-server`); .ci/run installs it.",
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === "object") resolve(address.port);
        else reject(new Error("no port"));
      });
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

async function launch(binary: string, dir: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    binary,
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      "--protected-mode",
      "yes",
      "--loglevel",
      "notice",
    ],
    { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`redis-server did not start within 10 s:\n${output}`));
    }, 10_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${String(code ?? signal)}) before it was ready:\n${output}`));
    });
  });
  child.stdout?.removeAllListeners("data");
  child.stderr?.removeAllListeners("data");
  child.stdout?.resume();
  child.stderr?.resume();
  child.removeAllListeners("exit");
  return child;
}

export async function startRedis(): Promise<RedisServer> {
  const binary = await findRedisServer();
  const dir = await mkdtemp(join(tmpdir(), "acp-warden-redis-"));
  let lastError: unknown;
  // The free port may be taken between the probe and the launch: try a few.
  for (let i = 0; i < 5; i++) {
    const port = await freePort();
    let child: ChildProcess;
    try {
      child = await launch(binary, dir, port);
    } catch (error) {
      lastError = error;
      continue;
    }
    const running = child;
    let stopping: Promise<void> | undefined;
    return {
      url: `redis://127.0.0.1:${port}`,
      stop(): Promise<void> {
        stopping ??= (async () => {
          const done = exited(running);
          running.kill("SIGTERM");
          const timer = setTimeout(() => running.kill("SIGKILL"), 5_000);
          await done;
          clearTimeout(timer);
          await rm(dir, { recursive: true, force: true });
        })();
        return stopping;
      },
    };
  }
  await rm(dir, { recursive: true, force: true });
  throw new Error(`could not start redis-server: ${String(lastError)}`);
}
