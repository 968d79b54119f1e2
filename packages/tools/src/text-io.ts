import { mkdir, readFile } from "node:fs/promises"
import { dirname } from "node:path"
import type { HostCallSite, HostFiles } from "@lathe/plugin"
import { writeFileAtomic } from "./text-file.js"

/**
 * The text of a file for the read and edit tools: through the host's `ctx.files` when it has one (an editor's unsaved
 * buffer), else from the disk. Binary files and images never come here: they are read from the disk.
 */
export const readText = (files: HostFiles | undefined, real: string, at: HostCallSite): Promise<string> =>
  files ? files.readText(real, at) : readFile(real, "utf8")

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
