import { type HostFiles, Tool } from "@lathe/plugin"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { editFile } from "./edit-apply.js"
import type { ToolState } from "./state.js"
import { toolSchema } from "./tool-schemas.js"

/** `edit` arguments. */
export const EditInput = z.object({
  filePath: z.string().min(1).describe("The file to change: absolute, or relative to the working directory"),
  oldString: z.string().describe("The text to replace, copied from the file; empty to create a new file"),
  newString: z.string().describe("The text to put in its place (must differ from oldString)"),
  replaceAll: z.boolean().optional().describe("Replace every match instead of requiring exactly one")
})
/** `edit` arguments, parsed. */
export type EditInput = z.infer<typeof EditInput>

/** What `edit` puts in `metadata`: the diff, the changed line range and the matcher that found the text. */
export interface EditMetadata {
  readonly filepath: string
  readonly diff: string
  readonly startLine: number
  readonly endLine: number
  readonly matchers: ReadonlyArray<string>
  readonly additions: number
  readonly deletions: number
}

/** Builds the `edit` tool over the given per-session state; with `files` (`ctx.files`) the text goes through it. */
export const createEditTool = (state: ToolState, files?: HostFiles) =>
  Tool.define("edit", {
    jsonSchema: toolSchema("edit"),
    description: loadDescription("edit"),
    parameters: EditInput,
    mutates: true,
    edits: true,
    paths: (args) => [args.filePath],
    execute: (args, ctx) => editFile(ctx, state, args.filePath, [args], undefined, files)
  })
