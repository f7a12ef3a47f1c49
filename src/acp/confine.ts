// Confinement of the agent's fs and terminal requests to the workspace. A path is inside when the
// real path of its deepest existing ancestor is the workspace's real path or below it, so `..`,
// symlinks that point out and sibling directories sharing a prefix (`/w/repo-evil`) are all outside.
import { lstat, realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

export class PathOutsideWorkspaceError extends Error {
  override readonly name = "PathOutsideWorkspaceError";
}

export interface ConfinedPath {
  /** The real absolute path (symlinks of existing ancestors resolved). */
  absolute: string;
  /** Relative to the workspace root, with `/` separators. */
  relative: string;
  exists: boolean;
}

export async function realWorkspaceRoot(workspace: string): Promise<string> {
  return realpath(resolve(workspace));
}

/** Resolves `requested` (absolute, or relative to the root) and checks it stays inside `realRoot`. */
export async function confinePath(realRoot: string, requested: string): Promise<ConfinedPath> {
  if (requested.includes("\0")) throw new PathOutsideWorkspaceError("path contains a NUL byte");
  const target = isAbsolute(requested) ? resolve(requested) : resolve(realRoot, requested);
  const { real, exists } = await realpathOfDeepestAncestor(target);
  if (!isWithin(realRoot, real)) {
    throw new PathOutsideWorkspaceError(`${requested} is outside the workspace ${realRoot}`);
  }
  return { absolute: real, relative: relative(realRoot, real).split(sep).join("/"), exists };
}

export function isWithin(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return candidate.startsWith(prefix);
}

async function realpathOfDeepestAncestor(target: string): Promise<{ real: string; exists: boolean }> {
  const missing: string[] = [];
  let current = target;
  for (;;) {
    try {
      const real = await realpath(current);
      if (missing.length > 0) {
        // A dangling symlink on the way would be followed by a later write: refuse it.
        await assertNotDanglingLink(join(real, missing[missing.length - 1]!));
      }
      return { real: join(real, ...missing.reverse()), exists: missing.length === 0 };
    } catch (error) {
      if (!isNotFound(error)) throw error;
      const parent = dirname(current);
      if (parent === current) throw error;
      missing.push(current.slice(parent.length).replace(/^[/\\]+/, ""));
      current = parent;
    }
  }
}

async function assertNotDanglingLink(path: string): Promise<void> {
  try {
    const stat = await lstat(path);
    if (stat.isSymbolicLink()) throw new PathOutsideWorkspaceError(`${path} is a dangling symbolic link`);
  } catch (error) {
    if (error instanceof PathOutsideWorkspaceError) throw error;
  }
}

function isNotFound(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    "code" in error &&
    ((error as { code: unknown }).code === "ENOENT" || (error as { code: unknown }).code === "ENOTDIR")
  );
}
