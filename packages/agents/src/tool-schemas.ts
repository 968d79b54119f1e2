import type { z } from "zod"
import schemas from "./tool-schemas.json" with { type: "json" }

/**
 * A tool's parameters as JSON Schema, from `tool-schemas.json`: written from the tools' zod schemas by
 * test/tool-schemas.test.ts (`npx vitest run -u test/tool-schemas.test.ts`), which fails when one changes without it.
 * Given as the tool's `jsonSchema` (see `Tool.define`), so that start-up converts no schema.
 */
export const toolSchema = (id: keyof typeof schemas): z.core.JSONSchema.BaseSchema =>
  schemas[id] as z.core.JSONSchema.BaseSchema
