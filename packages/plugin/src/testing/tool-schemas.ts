import { z } from "zod"
import type { AnyTool } from "../tool.js"

/**
 * `tools`' parameters as JSON Schema, by tool id, as the text of a JSON file: what each tool's `jsonSchema` in
 * `Tool.define` should be. A test that compares this with a file (`expect(toolSchemasJson(tools)).toMatchFileSnapshot(
 * "../src/tool-schemas.json")`) writes the file with `vitest -u` and fails when a schema changes without it; the tools
 * then give the file's entries as their `jsonSchema`, and Lathe converts nothing at start-up.
 */
export const toolSchemasJson = (tools: ReadonlyArray<AnyTool>): string =>
  `${JSON.stringify(
    Object.fromEntries(tools.map((tool) => [tool.id, z.toJSONSchema(tool.parameters, { io: "input" })])),
    null,
    2
  )}\n`
