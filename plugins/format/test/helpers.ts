import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs"
import { mkdir, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { delimiter, dirname, join, resolve } from "node:path"
import { Tool } from "@lathe/plugin"
import { z } from "zod"

/** The repository's own biome (a root devDependency), linked into temp projects as their `node_modules/.bin/biome`. */
export const REPO_BIOME = resolve(import.meta.dirname, "../../../node_modules/.bin/biome")

/** A fresh temp project with the given files (paths relative to it). */
export const tempProject = (files: Readonly<Record<string, string>> = {}): string => {
  const root = mkdtempSync(join(tmpdir(), "lathe-format-"))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

/** Links the repository's biome into `root/node_modules/.bin`, as `npm install @biomejs/biome` would. */
export const linkBiome = (root: string): void => {
  mkdirSync(join(root, "node_modules", ".bin"), { recursive: true })
  symlinkSync(REPO_BIOME, join(root, "node_modules", ".bin", "biome"))
}

/** A PATH with Node (biome's launcher is a Node script) and the system tools, plus the given folders first. */
export const pathWith = (...dirs: ReadonlyArray<string>): string =>
  [...dirs, dirname(process.execPath), "/usr/bin", "/bin"].join(delimiter)

/** A folder holding one executable shell script `name` with the given body, for use as PATH. */
export const binDir = (name: string, body: string): string => {
  const dir = mkdtempSync(join(tmpdir(), "lathe-format-bin-"))
  writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 })
  return dir
}

/** A minimal `write` tool, as the built-in one behaves for new files: writes `content` to `filePath`. */
export const WriteTool = Tool.define("write", {
  description: "Write a file",
  parameters: z.object({ filePath: z.string(), content: z.string() }),
  mutates: true,
  execute: async ({ filePath, content }, ctx) => {
    const path = resolve(ctx.directory, filePath)
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, content)
    return { title: filePath, output: `Wrote ${filePath}.` }
  }
})
