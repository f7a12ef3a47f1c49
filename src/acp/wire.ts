// Newline-delimited JSON-RPC over the agent's stdio. We frame lines ourselves (instead of the
// SDK's ndJsonStream) so that every message can be logged from the text we already have, and so
// that stdout pollution is recorded as a warning rather than silently answered.
import type { Readable, Writable } from "node:stream";
import type { AnyMessage, Stream } from "@agentclientprotocol/sdk";

export interface WireTap {
  /** A message received from the agent, with the line it came from. */
  incoming(message: AnyMessage, line: string): void;
  /** A message sent to the agent, with its serialized line. */
  outgoing(message: AnyMessage, line: string): void;
  /** A line that is not a JSON-RPC message; it is dropped. */
  invalidLine(preview: string, reason: string): void;
}

const NEWLINE = 0x0a;

/**
 * Wraps the agent's stdin/stdout as an ACP message stream. Reading pauses the agent's stdout while
 * the consumer is behind, so a flood of updates cannot grow memory without bound.
 */
export function agentStream(
  stdin: Writable,
  stdout: Readable,
  tap: WireTap,
  maxMessageBytes: number,
): Stream & { closed: Promise<void> } {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let skippingOversize = false;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });

  const readable = new ReadableStream<AnyMessage>(
    {
      start(controller) {
        const emitLine = (buf: Buffer) => {
          const line = buf.toString("utf8").trim();
          if (line.length === 0) return;
          if (line.charCodeAt(0) !== 0x7b /* { */) {
            tap.invalidLine(preview(line), "not a JSON object");
            return;
          }
          let message: unknown;
          try {
            message = JSON.parse(line);
          } catch {
            tap.invalidLine(preview(line), "invalid JSON");
            return;
          }
          if (message === null || typeof message !== "object" || Array.isArray(message)) {
            tap.invalidLine(preview(line), "not a JSON object");
            return;
          }
          const msg = message as AnyMessage;
          tap.incoming(msg, line);
          controller.enqueue(msg);
        };
        stdout.on("data", (chunk: Buffer) => {
          let start = 0;
          for (;;) {
            const nl = chunk.indexOf(NEWLINE, start);
            if (nl === -1) break;
            const piece = chunk.subarray(start, nl);
            start = nl + 1;
            if (skippingOversize) {
              skippingOversize = false;
              continue;
            }
            if (pendingBytes + piece.length > maxMessageBytes) {
              tap.invalidLine(
                preview((pending[0] ?? piece).subarray(0, 400).toString("utf8")),
                `line longer than ${maxMessageBytes} bytes`,
              );
              pending = [];
              pendingBytes = 0;
              continue;
            }
            if (pendingBytes > 0) {
              pending.push(piece);
              const whole = Buffer.concat(pending);
              pending = [];
              pendingBytes = 0;
              emitLine(whole);
            } else {
              emitLine(piece);
            }
          }
          if (start < chunk.length && !skippingOversize) {
            pending.push(chunk.subarray(start));
            pendingBytes += chunk.length - start;
            if (pendingBytes > maxMessageBytes) {
              tap.invalidLine(
                preview(Buffer.concat(pending.slice(0, 1)).toString("utf8")),
                `line longer than ${maxMessageBytes} bytes`,
              );
              pending = [];
              pendingBytes = 0;
              skippingOversize = true;
            }
          }
          if ((controller.desiredSize ?? 1) <= 0) stdout.pause();
        });
        const finish = () => {
          if (pendingBytes > 0 && !skippingOversize) emitLine(Buffer.concat(pending));
          pending = [];
          pendingBytes = 0;
          try {
            controller.close();
          } catch {
            // already closed or errored
          }
          resolveClosed();
        };
        stdout.once("end", finish);
        stdout.once("close", finish);
        stdout.once("error", finish);
      },
      pull() {
        if (stdout.isPaused()) stdout.resume();
      },
      cancel() {
        stdout.destroy();
      },
    },
    { highWaterMark: 256 },
  );

  const writable = new WritableStream<AnyMessage>({
    write(message) {
      const line = JSON.stringify(message);
      tap.outgoing(message, line);
      if (stdin.destroyed || stdin.writableEnded) return;
      return new Promise<void>((resolve) => {
        // A write to an exited agent fails with EPIPE; the exit is reported elsewhere.
        const ok = stdin.write(`${line}\n`, () => resolve());
        if (!ok) stdin.once("drain", () => undefined);
      });
    },
    close() {
      stdin.end();
    },
  });

  return { readable, writable, closed };
}

function preview(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}… (${text.length} chars)` : text;
}
