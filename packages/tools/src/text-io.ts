import { readFileSync, type Stats, statSync } from "node:fs"
import { mkdir, readFile } from "node:fs/promises"
import { dirname } from "node:path"
import type { HostCallSite, HostFiles } from "@lathe/plugin"
import { SYNC_TEXT_BYTES, writeFileAtomic } from "./text-file.js"

/**
 * The text of a file for the read and edit tools: through the host's `ctx.files` when it has one (an editor's unsaved
 * buffer), else from the disk. Binary files and images never come here: they are read from the disk. `info` is the
 * file's `stat` when the caller has it: a regular file of at most {@link SYNC_TEXT_BYTES} is then read in one
 * synchronous call (never anything else: a FIFO would hold the event loop until someone writes to it).
 */
export const readText = (
  files: HostFiles | undefined,
  real: string,
  at: HostCallSite,
  info?: { isFile(): boolean; readonly size: number }
): Promise<string> => {
  if (files) return files.readText(real, at)
  if (info?.isFile() && info.size <= SYNC_TEXT_BYTES) {
    try {
      return Promise.resolve(readFileSync(real, "utf8"))
    } catch (error) {
      return Promise.reject(error)
    }
  }
  return readFile(real, "utf8")
}

/**
 * Writes a text file the edit tools changed: through the host's `ctx.files` (the editor, which saves it) after making
 * its folder, else atomically on disk ({@link writeFileAtomic}).
 */
export const writeText = async (
  files: HostFiles | undefined,
  real: string,
  text: string,
  at: HostCallSite
): Promise<void> => {
  if (!files) return writeFileAtomic(real, text)
  await mkdir(dirname(real), { recursive: true })
  await files.writeText(real, text, at)
}

/**
 * `stat` of a file a tool is about to read or change, in one synchronous call (a few microseconds; the promise API is
 * a thread-pool round trip): `undefined` when nothing is there, any other failure thrown.
 */
export const statIfThere = (real: string): Stats | undefined => statSync(real, { throwIfNoEntry: false })
