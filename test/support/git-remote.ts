import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { ContentEntry, RepositoryContentSource } from "./fake-github/index.js";

const httpBackend = "/usr/lib/git-core/git-http-backend";

/** Git for the helpers below: no user or system config, a fixed identity. */
const gitEnv: Record<string, string> = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_TERMINAL_PROMPT: "0",
  LC_ALL: "C",
  GIT_AUTHOR_NAME: "Fixture",
  GIT_AUTHOR_EMAIL: "fixture@example.test",
  GIT_COMMITTER_NAME: "Fixture",
  GIT_COMMITTER_EMAIL: "fixture@example.test",
};

export interface GitRemoteOptions {
  /** Tokens accepted as the password of Basic `x-access-token:<token>`. */
  readonly tokens?: readonly string[];
  /** Also accepts tokens this says yes to (e.g. installation tokens the fake GitHub minted). */
  readonly acceptToken?: (token: string) => boolean;
}

export interface GitHttpRequestRecord {
  readonly method: string;
  /** Path and query, e.g. "/acme/widgets.git/info/refs?service=git-receive-pack". */
  readonly url: string;
  readonly service: "upload-pack" | "receive-pack" | null;
  /** Every Authorization header the request carried, decoded when Basic. */
  readonly credentials: readonly { readonly username: string; readonly password: string }[];
  readonly authorized: boolean;
  readonly status: number;
}

export interface CommitInfo {
  readonly sha: string;
  readonly subject: string;
  readonly body: string;
  readonly authorName: string;
  readonly authorEmail: string;
}

export interface CreateRepositoryInput {
  /** Path → content on the default branch's only commit. */
  readonly files: Readonly<Record<string, string>>;
  readonly defaultBranch?: string;
  readonly message?: string;
}

/**
 * Bare repositories under a temp dir, served by git's own `git-http-backend` (smart HTTP, push
 * enabled) behind Basic auth, the way GitHub takes `x-access-token:<token>`.
 * Repositories are named like GitHub's: "owner/name" → `${baseUrl}/owner/name.git`.
 */
export class GitHttpRemote {
  readonly requests: GitHttpRequestRecord[] = [];
  private readonly tokens: Set<string>;
  private baseUrl = "";

  private constructor(
    private readonly server: Server,
    readonly root: string,
    private readonly options: GitRemoteOptions,
  ) {
    this.tokens = new Set(options.tokens ?? []);
  }

  static async start(options: GitRemoteOptions = {}): Promise<GitHttpRemote> {
    const root = await mkdtemp(join(tmpdir(), "acp-warden-remote-"));
    const server = createServer();
    const remote = new GitHttpRemote(server, root, options);
    server.on("request", (request, response) => remote.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    remote.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return remote;
  }

  get url(): string {
    return this.baseUrl;
  }

  addToken(token: string): void {
    this.tokens.add(token);
  }

  revokeToken(token: string): void {
    this.tokens.delete(token);
  }

  /** Clone URL of "owner/name". */
  repositoryUrl(fullName: string): string {
    return `${this.baseUrl}/${fullName}.git`;
  }

  /** Path of the bare repository of "owner/name". */
  repositoryPath(fullName: string): string {
    return join(this.root, `${fullName}.git`);
  }

  /** A bare repository whose default branch holds `files` in one commit; returns that commit. */
  async createRepository(fullName: string, input: CreateRepositoryInput): Promise<string> {
    const branch = input.defaultBranch ?? "main";
    const bare = this.repositoryPath(fullName);
    await mkdir(dirname(bare), { recursive: true });
    await git(["init", "--quiet", "--bare", `--initial-branch=${branch}`, bare]);
    await git(["config", "http.receivepack", "true"], bare);
    const scratch = await mkdtemp(join(tmpdir(), "acp-warden-seed-"));
    try {
      await git(["init", "--quiet", `--initial-branch=${branch}`, scratch]);
      for (const [path, content] of Object.entries(input.files)) {
        await mkdir(dirname(join(scratch, path)), { recursive: true });
        await writeFile(join(scratch, path), content);
      }
      await git(["add", "--all"], scratch);
      await git(["commit", "--quiet", "--allow-empty", "-m", input.message ?? "Initial commit"], scratch);
      await git(["push", "--quiet", bare, `HEAD:refs/heads/${branch}`], scratch);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    return (await this.resolveRef(fullName, branch)) ?? "";
  }

  async resolveRef(fullName: string, ref: string): Promise<string | null> {
    const result = await git(
      ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`],
      this.repositoryPath(fullName),
      [1],
    );
    return result.exitCode === 0 ? result.stdout.trim() : null;
  }

  async readFile(fullName: string, ref: string, path: string): Promise<string | null> {
    const result = await git(["cat-file", "blob", `${ref}:${path}`], this.repositoryPath(fullName), [128]);
    return result.exitCode === 0 ? result.stdout : null;
  }

  async listFiles(fullName: string, ref: string): Promise<string[]> {
    const { stdout } = await git(["ls-tree", "-r", "--name-only", "-z", ref], this.repositoryPath(fullName));
    return stdout.split("\0").filter(Boolean);
  }

  async branches(fullName: string): Promise<string[]> {
    const { stdout } = await git(
      ["for-each-ref", "--format=%(refname:short)", "refs/heads/"],
      this.repositoryPath(fullName),
    );
    return stdout.split("\n").filter(Boolean);
  }

  /** Newest first. */
  async log(fullName: string, ref: string): Promise<CommitInfo[]> {
    const { stdout } = await git(
      ["log", "-z", "--format=%H%x1f%s%x1f%b%x1f%an%x1f%ae", ref],
      this.repositoryPath(fullName),
    );
    return stdout
      .split("\0")
      .filter(Boolean)
      .map((entry) => {
        const [sha = "", subject = "", body = "", authorName = "", authorEmail = ""] = entry.split("\x1f");
        return { sha, subject, body: body.trim(), authorName, authorEmail };
      });
  }

  /** Lets a FakeGitHub serve this repository's committed files through the contents API. */
  contentSource(fullName: string): RepositoryContentSource {
    const bare = this.repositoryPath(fullName);
    return {
      resolveRef: (ref) => this.resolveRef(fullName, ref),
      read: async (ref, path): Promise<ContentEntry | null> => {
        const spec = path === "" ? `${ref}^{tree}` : `${ref}:${path}`;
        const type = await git(["cat-file", "-t", spec], bare, [128]);
        if (type.exitCode !== 0) return null;
        const sha = (await git(["rev-parse", spec], bare)).stdout.trim();
        if (type.stdout.trim() === "blob") {
          const content = await gitBuffer(["cat-file", "blob", sha], bare);
          return { kind: "file", sha, content };
        }
        const listing = await git(["ls-tree", "-z", sha], bare);
        const entries = listing.stdout
          .split("\0")
          .filter(Boolean)
          .map((line) => {
            const [meta = "", name = ""] = line.split("\t");
            const [, objectType, objectSha = ""] = meta.split(" ");
            return {
              name,
              kind: objectType === "tree" ? ("dir" as const) : ("file" as const),
              sha: objectSha,
            };
          });
        return { kind: "dir", sha, entries };
      },
    };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.root, { recursive: true, force: true });
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? "/", this.baseUrl);
    const headerValues = request.headersDistinct.authorization ?? [];
    const credentials = headerValues.flatMap((value) => {
      const found = /^basic\s+(\S+)$/i.exec(value);
      if (!found?.[1]) return [];
      const decoded = Buffer.from(found[1], "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      return [{ username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }];
    });
    const authorized =
      credentials.length === 1 &&
      credentials[0]?.username === "x-access-token" &&
      (this.tokens.has(credentials[0].password) ||
        (this.options.acceptToken?.(credentials[0].password) ?? false));
    const serviceName = url.searchParams.get("service") ?? url.pathname.split("/").pop() ?? "";
    const service =
      serviceName === "git-upload-pack"
        ? "upload-pack"
        : serviceName === "git-receive-pack"
          ? "receive-pack"
          : null;
    const record = (status: number) =>
      this.requests.push({
        method: request.method ?? "GET",
        url: `${url.pathname}${url.search}`,
        service,
        credentials,
        authorized,
        status,
      });

    if (!authorized) {
      record(401);
      response.writeHead(401, { "www-authenticate": 'Basic realm="acp-warden test remote"' });
      response.end("Authentication required\n");
      return;
    }

    const cgi = spawn(httpBackend, [], {
      env: {
        ...gitEnv,
        GIT_PROJECT_ROOT: this.root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.replace(/^\?/, ""),
        REQUEST_METHOD: request.method ?? "GET",
        CONTENT_TYPE: request.headers["content-type"] ?? "",
        ...(request.headers["content-length"] && { CONTENT_LENGTH: request.headers["content-length"] }),
        ...(request.headers["content-encoding"] && {
          HTTP_CONTENT_ENCODING: request.headers["content-encoding"],
        }),
        ...(request.headers["git-protocol"] && { GIT_PROTOCOL: String(request.headers["git-protocol"]) }),
        REMOTE_USER: "x-access-token",
        REMOTE_ADDR: "127.0.0.1",
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    request.pipe(cgi.stdin);
    // The backend may stop reading early (e.g. on a bad request); its exit code tells, not EPIPE.
    cgi.stdin.on("error", () => {});
    cgi.stderr.resume();

    let head = Buffer.alloc(0);
    let headersSent = false;
    cgi.stdout.on("data", (chunk: Buffer) => {
      if (headersSent) {
        response.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const separator = head.indexOf("\r\n\r\n");
      if (separator < 0) return;
      const lines = head.subarray(0, separator).toString("latin1").split("\r\n");
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      record(status);
      response.writeHead(status, headers);
      headersSent = true;
      response.write(head.subarray(separator + 4));
    });
    const finish = () => {
      if (response.writableEnded) return;
      if (!headersSent) {
        record(502);
        response.writeHead(502);
      }
      response.end();
    };
    cgi.on("error", finish);
    cgi.on("close", finish);
  }
}

interface GitResult {
  readonly stdout: string;
  readonly exitCode: number;
}

function git(args: string[], cwd?: string, acceptExitCodes: number[] = []): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      args,
      { cwd, env: gitEnv, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (error as { code?: unknown }).code : 0;
        if (typeof code === "number" && (code === 0 || acceptExitCodes.includes(code))) {
          resolve({ stdout, exitCode: code });
        } else {
          reject(new Error(`git ${args.join(" ")} failed: ${stderr || String(error)}`));
        }
      },
    );
  });
}

function gitBuffer(args: string[], cwd: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      args,
      { cwd, env: gitEnv, encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}
