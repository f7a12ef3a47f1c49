// GitHub App authentication: the App's JWT (RS256, signed with its private key) and installation
// tokens minted with it (`POST /app/installations/{id}/access_tokens`), cached until shortly before
// they expire. Only the worker and the webhook handler hold these tokens; agents never see them.
import { createPrivateKey, type KeyObject, sign } from "node:crypto";

export interface AppCredentials {
  readonly appId: number | string;
  /** PEM (PKCS#1 or PKCS#8), as GitHub hands it out. */
  readonly privateKey: string;
}

export interface InstallationToken {
  readonly token: string;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
}

/** Where installation tokens come from; the worker and the webhook handler only see this. */
export interface InstallationTokens {
  get(installationId: number): Promise<InstallationToken>;
}

export interface InstallationTokenOptions extends AppCredentials {
  /** REST API root (GITHUB_API_URL); default https://api.github.com. */
  readonly baseUrl?: string;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  readonly userAgent?: string;
  /** Mint a new token when the cached one has less than this left; default 5 minutes. */
  readonly refreshBeforeMs?: number;
  /** Abort a minting request after this long; default 10 s. */
  readonly requestTimeoutMs?: number;
}

function base64url(input: Buffer | string): string {
  return Buffer.from(input).toString("base64url");
}

/** The App's own JWT: valid 9 minutes, issued 60 s in the past to absorb clock drift. */
export function createAppJwt(credentials: AppCredentials, nowMs: number = Date.now()): string {
  const key: KeyObject = createPrivateKey(credentials.privateKey);
  const now = Math.floor(nowMs / 1000);
  const header = base64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
  const payload = base64url(
    JSON.stringify({ iat: now - 60, exp: now + 9 * 60, iss: String(credentials.appId) }),
  );
  const signature = sign("RSA-SHA256", Buffer.from(`${header}.${payload}`), key);
  return `${header}.${payload}.${base64url(signature)}`;
}

export class InstallationTokenError extends Error {
  override readonly name = "InstallationTokenError";
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Mints installation tokens with the App JWT and caches them per installation. */
export function createInstallationTokens(options: InstallationTokenOptions): InstallationTokens {
  const baseUrl = (options.baseUrl ?? "https://api.github.com").replace(/\/+$/, "");
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const refreshBeforeMs = options.refreshBeforeMs ?? 5 * 60_000;
  const cache = new Map<number, InstallationToken>();
  const pending = new Map<number, Promise<InstallationToken>>();
  // Fail early on a malformed key rather than on the first delivery.
  createPrivateKey(options.privateKey);

  async function mint(installationId: number): Promise<InstallationToken> {
    const url = `${baseUrl}/app/installations/${encodeURIComponent(String(installationId))}/access_tokens`;
    let response: Response;
    try {
      response = await doFetch(url, {
        method: "POST",
        headers: {
          accept: "application/vnd.github+json",
          authorization: `Bearer ${createAppJwt(options, now())}`,
          "user-agent": options.userAgent ?? "acp-warden",
          "x-github-api-version": "2022-11-28",
        },
        signal: AbortSignal.timeout(options.requestTimeoutMs ?? 10_000),
      });
    } catch (error) {
      throw new InstallationTokenError(
        `could not reach ${url} to mint an installation token: ${error instanceof Error ? error.message : String(error)}`,
        0,
      );
    }
    const text = await response.text();
    if (response.status !== 201 && response.status !== 200) {
      let message = text.slice(0, 200);
      try {
        const parsed: unknown = JSON.parse(text);
        if (parsed && typeof parsed === "object" && "message" in parsed) message = String(parsed.message);
      } catch {
        // not JSON: keep the text
      }
      throw new InstallationTokenError(
        `minting a token for installation ${installationId} failed (${response.status}): ${message}`,
        response.status,
      );
    }
    const body: unknown = JSON.parse(text);
    const record = body && typeof body === "object" ? (body as Record<string, unknown>) : {};
    if (typeof record.token !== "string" || record.token === "")
      throw new InstallationTokenError(
        `GitHub answered without a token for installation ${installationId}`,
        response.status,
      );
    const expires = typeof record.expires_at === "string" ? Date.parse(record.expires_at) : Number.NaN;
    return { token: record.token, expiresAt: Number.isFinite(expires) ? expires : now() + 60 * 60_000 };
  }

  return {
    async get(installationId) {
      const cached = cache.get(installationId);
      if (cached && cached.expiresAt - now() > refreshBeforeMs) return cached;
      const inFlight = pending.get(installationId);
      if (inFlight) return inFlight;
      const promise = mint(installationId)
        .then((token) => {
          cache.set(installationId, token);
          return token;
        })
        .finally(() => pending.delete(installationId));
      pending.set(installationId, promise);
      return promise;
    },
  };
}
