export { CLIENT_PROTOCOL_VERSION, runAgentSession } from "./client.js";
export { confinePath, isWithin, PathOutsideWorkspaceError } from "./confine.js";
export { summarize } from "./transcript.js";
export * from "./types.js";
