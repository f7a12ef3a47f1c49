export type { BullMqConnection, BullMqQueueOptions } from "./bullmq.js";
export { bullMqJobId, createBullMqQueue, redisOptionsFromUrl } from "./bullmq.js";
export type { InProcessQueueOptions } from "./in-process.js";
export { createInProcessQueue } from "./in-process.js";
export type {
  EnqueueResult,
  JobHandler,
  JobHandlerContext,
  JobQueue,
  QueueWorker,
  RunJob,
} from "./port.js";
