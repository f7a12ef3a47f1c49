// `acp-warden serve` / `acp-warden worker` as the CLI runs them: settings from the environment,
// clear errors for missing ones, and a server that starts and stops on a signal.
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveCommand, workerCommand } from "../../src/entrypoints/app-main.js";
import { FakeGitHub } from "../support/fake-github/index.js";

const { privateKey, publicKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

let github: FakeGitHub;
let dir: string;

beforeAll(async () => {
  github = await FakeGitHub.start({ app: { id: 7, slug: "acp-warden", publicKey } });
  dir = await mkdtemp(join(tmpdir(), "acp-warden-app-main-"));
});
afterAll(async () => {
  await github?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function io() {
  const out = { stdout: "", stderr: "" };
  return {
    out,
    io: {
      stdout: (text: string) => {
        out.stdout += text;
      },
      stderr: (text: string) => {
        out.stderr += text;
      },
    },
  };
}

describe("serveCommand and workerCommand", () => {
  it("names the missing setting and how to fix it", async () => {
    const a = io();
    expect(await serveCommand({}, a.io)).toBe(1);
    expect(a.out.stderr).toContain("APP_ID is not set");

    const b = io();
    expect(await serveCommand({ APP_ID: "7" }, b.io)).toBe(1);
    expect(b.out.stderr).toContain("PRIVATE_KEY");

    const c = io();
    expect(await serveCommand({ APP_ID: "7", PRIVATE_KEY: privateKey }, c.io)).toBe(1);
    expect(c.out.stderr).toContain("WEBHOOK_SECRET is not set");

    const d = io();
    expect(await serveCommand({ APP_ID: "x7", PRIVATE_KEY: privateKey, WEBHOOK_SECRET: "s" }, d.io)).toBe(1);
    expect(d.out.stderr).toContain("APP_ID must be the App's numeric id");

    const e = io();
    expect(await workerCommand({ APP_ID: "7", PRIVATE_KEY: privateKey }, e.io)).toBe(1);
    expect(e.out.stderr).toContain("ACP_WARDEN_REDIS_URL is not set");

    const f = io();
    const env = {
      APP_ID: "7",
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: "s",
      ACP_WARDEN_REDIS_URL: "localhost:6379",
    };
    expect(await serveCommand(env, f.io)).toBe(1);
    expect(f.out.stderr).toContain("ACP_WARDEN_REDIS_URL must be a redis://");
  });

  it("serves webhooks with an in-process worker until stopped, verifying signatures", async () => {
    const keyPath = join(dir, "app.pem");
    await writeFile(keyPath, privateKey);
    const controller = new AbortController();
    const { out, io: commandIo } = io();
    let url = "";
    let exit: Promise<number> = Promise.resolve(-1);
    const ready = new Promise<void>((resolve) => {
      const done = serveCommand(
        {
          APP_ID: "7",
          PRIVATE_KEY_PATH: keyPath,
          WEBHOOK_SECRET: "serve-secret",
          PORT: "0",
          HOST: "127.0.0.1",
          GITHUB_API_URL: github.url,
          REDIS_URL: "redis://127.0.0.1:1",
          ACP_WARDEN_WORK_DIR: dir,
          LOG_LEVEL: "fatal",
        },
        commandIo,
        {
          signal: controller.signal,
          onReady: (info) => {
            url = info.url ?? "";
            resolve();
          },
        },
      );
      exit = done;
    });
    await ready;
    expect(out.stdout).toContain("in-process queue");
    expect(out.stdout).toContain("REDIS_URL is ignored");
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    const body = JSON.stringify({ action: "created", comment: { body: "/agent fix" } });
    const post = (signature: string) =>
      fetch(`${url}/api/github/webhooks`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "issue_comment",
          "x-github-delivery": "d-1",
          "x-hub-signature-256": signature,
        },
        body,
      });
    expect([400, 401]).toContain((await post(await sign("wrong", body))).status);
    // Correctly signed, but it names no installation: answered, ignored.
    expect((await post(await sign("serve-secret", body))).status).toBe(200);

    controller.abort();
    expect(await exit).toBe(0);
    expect(out.stdout).toContain("shutting down");
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
