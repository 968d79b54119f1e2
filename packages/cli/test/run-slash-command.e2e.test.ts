import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// `lathe run "/name args"` runs the command `name` as the interactive session does (`/name args` there): a command
// file's template or a plugin's command is what the model receives. The model is a scripted server on 127.0.0.1.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

// Several real CLI runs per test, on a machine shared with other test runs.
const timeoutMs = 90_000
const slow = { timeout: 4 * timeoutMs }

const greet = `import { definePlugin } from "@lathe/plugin"

export default definePlugin({
  name: "greeter",
  setup: () => ({
    commands: [
      {
        name: "greet",
        description: "Greets someone",
        run: (words) => \`PLUGIN-GREETING for \${words.join(" and ")}.\`
      }
    ]
  })
})
`

/** A project with a command file (review) and a plugin command (greet); each run gets one scripted answer. */
const project = async (answers: number) => {
  server = await startScriptedServer(Array.from({ length: answers }, () => ({ steps: [{ text: "Looked." }] })))
  const box = sandbox()
  mkdirSync(join(box.project, ".lathe", "commands"), { recursive: true })
  writeFileSync(
    join(box.project, ".lathe", "commands", "review.md"),
    "---\ndescription: Review code\n---\nREVIEW-TEMPLATE: review $ARGUMENTS for bugs, then list them.\n"
  )
  mkdirSync(join(box.project, ".lathe", "plugins"), { recursive: true })
  writeFileSync(join(box.project, ".lathe", "plugins", "greet.mjs"), greet)
  return { ...box, env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }, server }
}

/** The text of the last user message of a chat.completions request body. */
const lastUserText = (body: unknown): string => {
  const messages = (body as { messages?: ReadonlyArray<{ role: string; content: unknown }> }).messages ?? []
  const content = messages.findLast((m) => m.role === "user")?.content
  return typeof content === "string" ? content : JSON.stringify(content)
}

describe('lathe run "/name args"', () => {
  it(
    "expands a command file and a plugin command like the interactive session; --command sends the same",
    slow,
    async () => {
      const { project: cwd, env, server } = await project(3)
      assert.strictEqual((await runLathe(["trust"], { cwd, env, timeoutMs })).code, 0)

      const review = await runLathe(["run", "/review src/parser.ts"], { cwd, env, timeoutMs })
      assert.strictEqual(review.code, 0, review.stderr)
      assert.include(review.stdout, "Looked.")
      const sent = lastUserText(server.requests[0]?.body)
      assert.include(sent, "REVIEW-TEMPLATE: review src/parser.ts for bugs, then list them.")
      assert.notInclude(sent, "/review")

      const greet = await runLathe(["run", "/greet ada 'grace hopper'"], { cwd, env, timeoutMs })
      assert.strictEqual(greet.code, 0, greet.stderr)
      assert.include(lastUserText(server.requests[1]?.body), "PLUGIN-GREETING for ada and grace hopper.")

      const flag = await runLathe(["run", "--command", "review", "src/parser.ts"], { cwd, env, timeoutMs })
      assert.strictEqual(flag.code, 0, flag.stderr)
      assert.strictEqual(lastUserText(server.requests[2]?.body), sent)
    }
  )

  it(
    "an unknown name is refused like --command's (nothing sent); a path or // goes to the model as typed",
    slow,
    async () => {
      const { project: cwd, env, server } = await project(2)
      const unknown = await runLathe(["run", "/reveiw src"], { cwd, env, timeoutMs })
      assert.strictEqual(unknown.code, 2)
      assert.include(unknown.stderr, 'No command "reveiw"')
      assert.strictEqual(server.requests.length, 0)

      const path = await runLathe(["run", "/etc/hosts has a wrong line"], { cwd, env, timeoutMs })
      assert.strictEqual(path.code, 0, path.stderr)
      assert.strictEqual(lastUserText(server.requests[0]?.body), "/etc/hosts has a wrong line")

      const escaped = await runLathe(["run", "//review is not a command here"], { cwd, env, timeoutMs })
      assert.strictEqual(escaped.code, 0, escaped.stderr)
      assert.strictEqual(lastUserText(server.requests[1]?.body), "//review is not a command here")
    }
  )
})
