/**
 * bash starts from the environment Lathe was started with, which the CLI hands to the tools plugin
 * (`createToolsPlugin({ startEnv })`): provider keys the `lathe` launcher handed over on a descriptor are not in
 * `process.env`, yet scrubbing and `shell.env.inherit` decide about them as about any variable. End to end through the
 * launcher, the built bundle and a scripted model: a key the config names in `shell.env.inherit` reaches the command;
 * the provider's own key, also handed over, does not.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runProgram, sandbox } from "./helpers.js"

const bundle = fileURLToPath(new URL("../dist/bundle/lathe.js", import.meta.url))
const launcher = fileURLToPath(new URL("../bin/lathe", import.meta.url))

/** The provider's key and a key the person lets through; both match the launcher's `*_API_KEY`. */
const PROVIDER_KEY = "LATHE_STARTENV_API_KEY"
const PASSED_KEY = "LATHE_STARTENV_PASSED_API_KEY"
const COMMAND = `echo "passed=\${${PASSED_KEY}:-unset} provider=\${${PROVIDER_KEY}:-unset}" > seen.txt`

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

describe("bash's start environment comes from the CLI (the launcher's keys included)", () => {
  it("a handed-over key named in shell.env.inherit reaches the command; the provider's key does not", async (ctx) => {
    ctx.skip(!existsSync(bundle), `${bundle} is missing: build it with \`npx nx run @lathe/cli:bundle\``)
    let chats = 0
    const server = await startScriptedServer((request) => {
      if (JSON.stringify(request.body).includes("Write a title")) return { steps: [{ text: "A title" }] }
      chats += 1
      return chats === 1
        ? { steps: [{ tool: "bash", input: { command: COMMAND, description: "write what it sees" } }] }
        : { steps: [{ text: "Done." }] }
    })
    servers.push(server)
    const box = sandbox()
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(
      join(box.dir, "config", "lathe", "lathe.json"),
      JSON.stringify({
        model: "keyed/m",
        sandbox: "off",
        shell: { env: { inherit: [PASSED_KEY] } },
        provider: {
          keyed: { type: "openai-compatible", baseURL: server.url, apiKey: `{env:${PROVIDER_KEY}}`, models: { m: {} } }
        }
      })
    )
    const env = {
      ...box.env,
      // The launcher runs `node` from PATH: the one running these tests first.
      PATH: [dirname(process.execPath), box.env.PATH].join(delimiter),
      [PROVIDER_KEY]: "sk-startenv-provider-3b1f",
      [PASSED_KEY]: "sk-startenv-passed-9c2e"
    }
    const result = await runProgram(launcher, ["run", "--yes", "write it"], {
      cwd: box.project,
      env,
      timeoutMs: 60_000
    })
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(
      readFileSync(join(box.project, "seen.txt"), "utf8"),
      "passed=sk-startenv-passed-9c2e provider=unset\n"
    )
    // The provider still got its key, which came over the descriptor too.
    assert.include(JSON.stringify(server.requests[0]?.headers), "sk-startenv-provider-3b1f")
  }, 90_000)
})
