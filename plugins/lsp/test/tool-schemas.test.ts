import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setUpPlugin, toolSchemasJson } from "@lathe/plugin/testing"
import { assert, describe, expect, it } from "vitest"
import { createLspPlugin } from "../src/index.js"
import { toolSchema } from "../src/tool-schemas.js"

describe("the language-server tools' JSON Schemas", () => {
  // After changing a tool's parameters: `npx vitest run -u test/tool-schemas.test.ts` writes the file again.
  it("are shipped as zod makes them from the parameters, and each tool gives its own", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-lsp-schemas-"))
    const plugin = await setUpPlugin(createLspPlugin({ dataDir: dir, env: {} }), {
      root: dir,
      config: { lsp: { install: false } }
    })
    try {
      const tools = plugin.hooks.tools ?? []
      assert.isAbove(tools.length, 0)
      await expect(toolSchemasJson(tools)).toMatchFileSnapshot("../src/tool-schemas.json")
      for (const tool of tools) assert.strictEqual(tool.jsonSchema(), toolSchema(tool.id as never), tool.id)
    } finally {
      await plugin.hooks.dispose?.()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
