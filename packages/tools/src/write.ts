import { statSync } from "node:fs"
import { type HostFiles, Tool } from "@lathe/plugin"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { checkProtected, locate, resolvePath } from "./paths.js"
import type { ToolState } from "./state.js"
import { diffStats, unifiedDiff } from "./text-file.js"
import { readText, statIfThere, writeText } from "./text-io.js"
import { toolSchema } from "./tool-schemas.js"

/** `write` arguments. */
export const WriteInput = z.object({
  filePath: z.string().min(1).describe("The file to write: absolute, or relative to the working directory"),
  content: z.string().describe("The whole new content of the file")
})
/** `write` arguments, parsed. */
export type WriteInput = z.infer<typeof WriteInput>

/**
 * Builds the `write` tool. Overwriting an existing file requires that this session read it (with `read`, or
 * wrote it with an edit tool) and that it has not changed on disk since; new files and folders are created. With
 * `files` (the host's `ctx.files`), the old text is read and the new one written through it.
 */
export const createWriteTool = (state: ToolState, files?: HostFiles) =>
  Tool.define("write", {
    jsonSchema: toolSchema("write"),
    description: loadDescription("write"),
    parameters: WriteInput,
    mutates: true,
    edits: true,
    paths: (args) => [args.filePath],
    execute: async (args, ctx) => {
      const { path, label, real, patterns } = await locate(ctx, resolvePath(ctx, args.filePath), "file")
      const info = statIfThere(real)
      if (info?.isDirectory()) throw new Error(`${label} is a directory; give the path of a file to write.`)
      if (info) {
        const seen = state.lastRead(ctx.sessionID, real)
        if (!seen)
          throw new Error(
            `${label} already exists and you have not read it in this session. ` +
              `Read it with the read tool first, then write it.`
          )
        if (seen.mtimeMs !== info.mtimeMs || seen.size !== info.size)
          throw new Error(
            `${label} has changed on disk since you last read it. Read it again to see the current ` +
              `content before overwriting it.`
          )
      }
      const at = { sessionID: ctx.sessionID, callID: ctx.callID }
      const before = info ? await readText(files, real, at, info) : ""
      const diff = unifiedDiff(label, before, args.content)
      await ctx.ask({ permission: "edit", patterns, metadata: { filepath: path, realPath: real, diff } })
      await checkProtected(ctx, path, real, { filepath: path, diff })
      await writeText(files, real, args.content, at)
      state.recordRead(ctx.sessionID, real, statSync(real))
      const lines = args.content === "" ? 0 : args.content.replace(/\n$/, "").split("\n").length
      return {
        title: label,
        output: `${info ? "Overwrote" : "Created"} ${label} (${lines} lines).`,
        metadata: { filepath: path, diff, created: !info, ...diffStats(diff) }
      }
    }
  })
