// The GitHub App front door: a Probot app that verifies each webhook delivery's signature and hands
// it to the webhook decision (src/app/webhooks.ts), which authorizes, reacts and enqueues. Jobs run
// in workers (src/app/worker.ts), in this process or on other machines.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type ApplicationFunction, createNodeMiddleware, Probot } from "probot";
import { createInstallationTokens, type InstallationTokens } from "../app/auth.js";
import {
  APP_EVENTS,
  createWebhookHandler,
  type WebhookDecision,
  type WebhookDelivery,
  type WebhookHandler,
} from "../app/webhooks.js";
import { createOctokitGitHub } from "../github/octokit.js";
import type { GitHubPort } from "../github/port.js";
import type { TriggerSettings } from "../pipeline/trigger.js";
import type { JobQueue } from "../queue/port.js";

export interface CreateAppOptions {
  readonly handler: WebhookHandler;
  /** Called with each decision (logging, tests). */
  readonly onDecision?: (delivery: WebhookDelivery, decision: WebhookDecision) => void;
  readonly log?: (line: string) => void;
}

/** The Probot app function: the subscribed events go to the webhook decision. */
export function createApp(options: CreateAppOptions): ApplicationFunction {
  const log = options.log ?? (() => {});
  return (app) => {
    app.on([...APP_EVENTS], async (context) => {
      const delivery: WebhookDelivery = { id: context.id, name: context.name, payload: context.payload };
      const decision = await options.handler(delivery);
      if (decision.action === "ignored") log(`${delivery.id} ${delivery.name}: ignored — ${decision.reason}`);
      else if (decision.action === "duplicate")
        log(`${delivery.id} ${delivery.name}: duplicate — ${decision.reason}`);
      options.onDecision?.(delivery, decision);
    });
  };
}

export interface AppServerOptions {
  readonly appId: number | string;
  /** PEM of the App's private key. */
  readonly privateKey: string;
  readonly webhookSecret: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Interface to listen on; default all interfaces. */
  readonly host?: string;
  /** GitHub REST API root (GITHUB_API_URL), e.g. https://api.github.com or a local server. */
  readonly baseUrl: string;
  readonly queue: JobQueue;
  readonly trigger: TriggerSettings;
  /** Default `/api/github/webhooks` (Probot's). */
  readonly webhookPath?: string;
  /** Installation tokens; default minted with the App's JWT against `baseUrl`. */
  readonly tokens?: InstallationTokens;
  /** GitHub client for an installation token; default the Octokit port against `baseUrl`. */
  readonly createGitHub?: (token: string) => GitHubPort;
  readonly log?: (line: string) => void;
  readonly onDecision?: (delivery: WebhookDelivery, decision: WebhookDecision) => void;
  /** Probot's own (pino) log level; default "warn". */
  readonly probotLogLevel?: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
}

export interface AppServer {
  /** http://host:port of the server. */
  readonly url: string;
  /** Where GitHub sends deliveries. */
  readonly webhookUrl: string;
  readonly port: number;
  close(): Promise<void>;
}

const DEFAULT_WEBHOOK_PATH = "/api/github/webhooks";

/** Starts the webhook server. Probot's Redis and webhook proxy are never enabled here. */
export async function startAppServer(options: AppServerOptions): Promise<AppServer> {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const log = options.log ?? (() => {});
  const tokens =
    options.tokens ??
    createInstallationTokens({ appId: options.appId, privateKey: options.privateKey, baseUrl });
  const createGitHub =
    options.createGitHub ??
    ((token: string) => createOctokitGitHub({ token, baseUrl, userAgent: "acp-warden-app" }));
  // One client per token, so that the client's request spacing covers all deliveries.
  const clients = new Map<string, GitHubPort>();
  const githubFor = async (installationId: number): Promise<GitHubPort> => {
    const { token } = await tokens.get(installationId);
    let client = clients.get(token);
    if (!client) {
      if (clients.size >= 1000) clients.clear();
      client = createGitHub(token);
      clients.set(token, client);
    }
    return client;
  };

  const handler = createWebhookHandler({ queue: options.queue, githubFor, trigger: options.trigger, log });
  const probot = new Probot({
    appId: options.appId,
    privateKey: options.privateKey,
    secret: options.webhookSecret,
    baseUrl,
    logLevel: options.probotLogLevel ?? "warn",
  });
  const webhookPath = options.webhookPath ?? DEFAULT_WEBHOOK_PATH;
  const middleware = await createNodeMiddleware(
    createApp({ handler, log, ...(options.onDecision ? { onDecision: options.onDecision } : {}) }),
    { probot, webhooksPath: webhookPath },
  );

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method === "GET" && (path === "/healthz" || path === "/")) {
      response.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      return;
    }
    Promise.resolve(
      middleware(request, response, () => {
        if (!response.headersSent)
          response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      }),
    ).catch((error: unknown) => {
      log(`webhook server error: ${error instanceof Error ? error.message : String(error)}`);
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost =
    !options.host || options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  const url = `http://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${port}`;
  return {
    url,
    webhookUrl: `${url}${webhookPath}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeIdleConnections();
        server.close(() => resolve());
      }),
  };
}
