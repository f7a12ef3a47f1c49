import { createRequire as __acpWardenCreateRequire } from 'node:module'; const require = __acpWardenCreateRequire(import.meta.url);

// src/entrypoints/cli.ts
console.log("acp-warden");
