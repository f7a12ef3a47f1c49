// Pure path rules: a request path becomes a workspace-relative path, or a refusal.
// Containment is decided with path.relative, never with a string prefix, so /w/repo-evil is not
// inside /w/repo. The file-system half (symlinks, hardlinks) is injected as a PathInspector.
import { posix } from "node:path";

/** What the file system says about a path; see path-inspector.ts for the real implementation. */
export interface PathInspection {
  /** The path with every existing ancestor resolved through symlinks. */
  realPath: string;
  /** An existing regular file with more than one hard link: a write would also change the other names. */
  hardlinked: boolean;
  /** The path (or an ancestor) is a symlink whose target does not exist. */
  danglingSymlink: boolean;
}

export interface PathInspector {
  inspect(absolutePath: string): PathInspection;
}

export type ResolvedPath =
  | {
      ok: true;
      /** Workspace-relative, '/'-separated, "" for the workspace root. */
      relative: string;
      /** The real location, when an inspector was given and it differs from `relative`. */
      realRelative?: string;
    }
  | { ok: false; ruleId: string; reason: string };

/** `relative` when `child` is the workspace or inside it, otherwise undefined. */
export function relativeInside(workspace: string, child: string): string | undefined {
  const relative = posix.relative(workspace, child);
  if (relative === "") return "";
  if (relative === ".." || relative.startsWith("../") || posix.isAbsolute(relative)) return undefined;
  return relative;
}

export function normalizeWorkspace(workspace: string): string {
  return posix.normalize(workspace).replace(/(.)\/+$/, "$1");
}

/**
 * Resolves a request path against the workspace (and `base`, a directory inside it, for relative
 * paths). `write` marks edits, deletes and moves, for which hardlinked files count as outside.
 */
export function resolveWorkspacePath(
  rawPath: string,
  options: { workspace: string; base?: string; write: boolean; inspector?: PathInspector },
): ResolvedPath {
  if (rawPath.length === 0) return { ok: false, ruleId: "request.missing-path", reason: "the path is empty" };
  if (rawPath.includes("\0"))
    return {
      ok: false,
      ruleId: "path.nul",
      reason: `path ${JSON.stringify(rawPath)} contains a NUL character`,
    };
  const workspace = normalizeWorkspace(options.workspace);
  if (!posix.isAbsolute(workspace))
    return {
      ok: false,
      ruleId: "path.workspace",
      reason: `workspace ${JSON.stringify(workspace)} is not absolute`,
    };
  const base = options.base ?? workspace;
  const absolute = posix.normalize(posix.isAbsolute(rawPath) ? rawPath : posix.join(base, rawPath));
  const relative = relativeInside(workspace, absolute);
  if (relative === undefined)
    return {
      ok: false,
      ruleId: "path.outside-workspace",
      reason: `${JSON.stringify(rawPath)} is outside the workspace ${workspace}`,
    };
  if (!options.inspector) return { ok: true, relative };

  const realWorkspace = options.inspector.inspect(workspace).realPath;
  const inspection = options.inspector.inspect(absolute);
  if (inspection.danglingSymlink)
    return {
      ok: false,
      ruleId: "path.dangling-symlink",
      reason: `${JSON.stringify(rawPath)} goes through a symlink whose target does not exist`,
    };
  const realRelative = relativeInside(realWorkspace, inspection.realPath);
  if (realRelative === undefined)
    return {
      ok: false,
      ruleId: "path.outside-workspace",
      reason: `${JSON.stringify(rawPath)} resolves through a symlink to ${inspection.realPath}, outside the workspace`,
    };
  if (options.write && inspection.hardlinked)
    return {
      ok: false,
      ruleId: "path.hardlink",
      reason: `${JSON.stringify(rawPath)} has other hard links; writing it could change a file outside the workspace`,
    };
  return realRelative === relative ? { ok: true, relative } : { ok: true, relative, realRelative };
}
