import { type HostFiles, Tool } from "@lathe/plugin"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { editFile } from "./edit-apply.js"
import type { ToolState } from "./state.js"
import { toolSchema } from "./tool-schemas.js"

/** `multiedit` arguments: several edits of one file, applied in order, all or nothing. */
export const MultiEditInput = z.object({
  filePath: z.string().min(1).describe("The file to change: absolute, or relative to the working directory"),
  edits: z
    .array(
      z.object({
        oldString: z.string().describe("The text to replace, as it reads after the previous edits"),
        newString: z.string().describe("The text to put in its place"),
        replaceAll: z.boolean().optional().describe("Replace every match instead of requiring exactly one")
      })
    )
    .min(1)
    .describe("The edits, applied one after another")
})
/** `multiedit` arguments, parsed. */
export type MultiEditInput = z.infer<typeof MultiEditInput>

/** Builds the `multiedit` tool over the given per-session state; with `files` (`ctx.files`) the text goes through it. */
export const createMultiEditTool = (state: ToolState, files?: HostFiles) =>
  Tool.define("multiedit", {
    jsonSchema: toolSchema("multiedit"),
    description: loadDescription("multiedit"),
    parameters: MultiEditInput,
    mutates: true,
    edits: true,
    paths: (args) => [args.filePath],
    execute: (args, ctx) =>
      editFile(
        ctx,
        state,
        args.filePath,
        args.edits,
        (index, message) => `Edit ${index + 1} of ${args.edits.length} failed: ${message}\nNo edits were applied.`,
        files
      )
  })
