// Workspace-relative path globs (picomatch syntax, dotfiles included).
// Restrictive lists (deny, ask, protected) match case-insensitively on NFC-normalized text, so a
// case-insensitive or normalizing file system cannot be used to slip past them; allow lists match
// exactly, so they never grant more than they say.
import picomatch from "picomatch";

export type GlobMode = "exact" | "loose";

const matcherCache = new Map<string, (path: string) => boolean>();

export function validateGlob(glob: string): string | undefined {
  if (glob.length === 0) return "a glob cannot be empty";
  if (glob.includes("\0")) return "a glob cannot contain NUL";
  if (glob.startsWith("/")) return "globs are workspace-relative: drop the leading '/'";
  if (glob.startsWith("!")) return "negated globs are not supported: put the path in `deny` instead";
  if (glob.includes("\\\\") || /\\(?![*?[\]{}()!@+])/.test(glob))
    return "use '/' as the path separator (a backslash only escapes a glob character)";
  if (glob.split("/").some((segment) => segment === ".." || segment === "."))
    return "'.' and '..' segments never match a normalized path";
  try {
    picomatch(glob, { dot: true, strictBrackets: true });
  } catch (error) {
    return `bad glob: ${error instanceof Error ? error.message : String(error)}`;
  }
  return undefined;
}

function compile(glob: string, mode: GlobMode): (path: string) => boolean {
  const key = `${mode}\0${glob}`;
  let matcher = matcherCache.get(key);
  if (!matcher) {
    const compiled = picomatch(mode === "loose" ? glob.normalize("NFC") : glob, {
      dot: true,
      nocase: mode === "loose",
    });
    // The workspace root itself ("") is matched only by a pattern that covers everything.
    matcher = (path: string) => (path === "" ? glob === "**" : compiled(path));
    matcherCache.set(key, matcher);
  }
  return matcher;
}

/** `path` is workspace-relative with '/' separators ("" is the workspace root). */
export function globMatches(glob: string, path: string, mode: GlobMode): boolean {
  return compile(glob, mode)(mode === "loose" ? path.normalize("NFC") : path);
}

/** Escapes a literal path so it can be pasted as a glob that matches only itself. */
export function escapeGlob(path: string): string {
  return path.replace(/[*?[\]{}()!@+\\]/g, (c) => `\\${c}`);
}

/** Simple glob over a non-path name (tool names, modes, branches): `*` = any run of characters. */
export function nameMatches(pattern: string, name: string): boolean {
  if (pattern === "*") return true;
  if (!pattern.includes("*")) return pattern === name;
  const parts = pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`, "s").test(name);
}
