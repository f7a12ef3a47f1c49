// Keeps the tracking comment current without flooding GitHub: changes are coalesced, at most one
// edit per interval, only one request in flight, and a failed edit never stops the run.

export interface CommentUpdaterOptions {
  /** Creates the comment and returns its id; null when there is nowhere to comment (e.g. schedule). */
  create: (body: string) => Promise<number | null>;
  update: (id: number, body: string) => Promise<void>;
  render: () => string;
  intervalMs: number;
  log: (line: string) => void;
  now?: () => number;
}

export class CommentUpdater {
  private id: number | null = null;
  private lastBody = "";
  private lastEditAt = 0;
  private dirty = false;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  private finished = false;
  edits = 0;
  failures = 0;

  constructor(private readonly options: CommentUpdaterOptions) {}

  get commentId(): number | null {
    return this.id;
  }

  async start(): Promise<void> {
    const body = this.options.render();
    try {
      this.id = await this.options.create(body);
      this.lastBody = body;
      this.lastEditAt = this.now();
    } catch (error) {
      this.failures++;
      this.options.log(`could not create the tracking comment: ${message(error)}`);
    }
  }

  /** Marks the report as changed; an edit follows within the interval. */
  touch(): void {
    if (this.finished || this.id === null) return;
    this.dirty = true;
    if (this.timer) return;
    const wait = Math.max(0, this.lastEditAt + this.options.intervalMs - this.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.inFlight = this.inFlight.then(() => this.flush());
    }, wait);
    this.timer.unref?.();
  }

  /** Writes the final state, waiting for any edit in flight first. */
  async finish(): Promise<void> {
    this.finished = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    await this.inFlight;
    this.dirty = true;
    if (this.id === null) {
      // The comment could not be created at the start: try once more so the outcome is visible.
      await this.start();
      return;
    }
    await this.flush();
  }

  private async flush(): Promise<void> {
    if (!this.dirty || this.id === null) return;
    this.dirty = false;
    const body = this.options.render();
    if (body === this.lastBody) return;
    this.lastEditAt = this.now();
    try {
      await this.options.update(this.id, body);
      this.lastBody = body;
      this.edits++;
    } catch (error) {
      this.failures++;
      this.options.log(`could not update the tracking comment: ${message(error)}`);
      this.dirty = true;
    }
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
