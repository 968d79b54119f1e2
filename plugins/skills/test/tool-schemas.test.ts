import { assert, describe, expect, it } from "@effect/vitest"
import { toolSchemasJson } from "@lathe/plugin/testing"
import { createSkillTool } from "../src/skill-tool.js"
import { toolSchema } from "../src/tool-schemas.js"

describe("the skill tool's JSON Schema", () => {
  // After changing its parameters: `npx vitest run -u test/tool-schemas.test.ts` writes the file again.
  it("is shipped as zod makes it from the parameters, and the tool gives it", async () => {
    const tool = createSkillTool([])
    await expect(toolSchemasJson([tool])).toMatchFileSnapshot("../src/tool-schemas.json")
    assert.strictEqual(tool.jsonSchema(), toolSchema("skill"))
  })
})
