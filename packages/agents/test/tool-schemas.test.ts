import { assert, describe, expect, it } from "@effect/vitest"
import { toolSchemasJson } from "@lathe/plugin/testing"
import { createPlanTools } from "../src/plan-tools.js"
import { createTaskTool } from "../src/task.js"
import { toolSchema } from "../src/tool-schemas.js"

describe("the agents' tools' JSON Schemas", () => {
  // After changing a tool's parameters: `npx vitest run -u test/tool-schemas.test.ts` writes the file again.
  it("are shipped as zod makes them from the parameters, and each tool gives its own", async () => {
    const tools = [createTaskTool([]), ...createPlanTools()]
    await expect(toolSchemasJson(tools)).toMatchFileSnapshot("../src/tool-schemas.json")
    for (const tool of tools) assert.strictEqual(tool.jsonSchema(), toolSchema(tool.id as never), tool.id)
  })
})
