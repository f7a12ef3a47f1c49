// The file-system edge of the path rules: realpath of the deepest existing ancestor, hardlink
// counts, dangling symlinks. It reads the file system only through the FileFacts interface it is
// given, so tests can pass a fake and production passes `nodeFileFacts()`.
import { lstatSync, realpathSync, statSync } from "node:fs";
import { posix } from "node:path";
import type { PathInspection, PathInspector } from "./paths.js";

export interface FileStat {
  nlink: number;
  isFile: boolean;
  isSymbolicLink: boolean;
}

export interface FileFacts {
  /** Follows symlinks; undefined when nothing exists there (or the link dangles). */
  stat(path: string): FileStat | undefined;
  /** Does not follow the last symlink; undefined when nothing exists there. */
  lstat(path: string): FileStat | undefined;
  realpath(path: string): string;
}

export function nodeFileFacts(): FileFacts {
  const toStat = (s: { nlink: number; isFile(): boolean; isSymbolicLink(): boolean }): FileStat => ({
    nlink: s.nlink,
    isFile: s.isFile(),
    isSymbolicLink: s.isSymbolicLink(),
  });
  return {
    stat(path) {
      const s = statSync(path, { throwIfNoEntry: false });
      return s ? toStat(s) : undefined;
    },
    lstat(path) {
      const s = lstatSync(path, { throwIfNoEntry: false });
      return s ? toStat(s) : undefined;
    },
    realpath: (path) => realpathSync.native(path),
  };
}

export function createPathInspector(files: FileFacts = nodeFileFacts()): PathInspector {
  return {
    inspect(absolutePath: string): PathInspection {
      const normalized = posix.normalize(absolutePath);
      const missing: string[] = [];
      let existing = normalized;
      let danglingSymlink = false;
      // Walk up to the deepest ancestor that exists; the missing tail cannot hold symlinks.
      while (files.stat(existing) === undefined) {
        if (files.lstat(existing)?.isSymbolicLink) danglingSymlink = true;
        const parent = posix.dirname(existing);
        if (parent === existing) break;
        missing.unshift(posix.basename(existing));
        existing = parent;
      }
      const realAncestor = files.realpath(existing);
      const realPath = missing.length > 0 ? posix.join(realAncestor, ...missing) : realAncestor;
      const target = missing.length === 0 ? files.stat(normalized) : undefined;
      return {
        realPath,
        hardlinked: target?.isFile === true && target.nlink > 1,
        danglingSymlink,
      };
    },
  };
}
