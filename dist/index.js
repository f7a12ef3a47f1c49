import { createRequire as __acpWardenCreateRequire } from 'node:module'; const require = __acpWardenCreateRequire(import.meta.url);

// src/entrypoints/action.ts
console.log("acp-warden: the GitHub Action front door is not implemented yet.");
