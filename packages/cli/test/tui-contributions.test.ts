import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { Controller } from "../src/tui/controller.js"
import { sandbox } from "./helpers.js"

// A plugin's commands and resources in the interactive session (the agent in this process, a scripted model on
// 127.0.0.1): `/` lists them beside the built-ins and the command files, `@` beside the files, and they run.
let server: ScriptedServer | undefined
let controller: Controller | undefined
afterEach(async () => {
  await controller?.dispose()
  await server?.close()
  controller = undefined
  server = undefined
})

/** The person's own plugin (~/.config/lathe/plugins): a command, a resource, and a command it adds after setup. */
const PLUGIN = `
export default async (ctx) => {
  setTimeout(() => ctx.commands.set([{ name: "later", description: "Added after setup", run: async () => "later" }]), 50)
  return {
    commands: [
      {
        name: "greet",
        description: "Greet people by name",
        arguments: [{ name: "names", required: true }],
        run: async (words) => {
          if (words.length === 0) throw new Error("greet needs at least one name")
          return "Say hello to " + words.join(" and ") + "."
        }
      }
    ],
    resources: {
      list: async () => [{ uri: "notes:today", name: "Today's notes" }],
      read: async (uri) => [{ type: "text", text: "NOTES-OF " + uri, synthetic: true }]
    }
  }
}
`

const isTitle = (request: RecordedRequest) => JSON.stringify(request.body).includes("Write a title for this")
const lastMessage = (request: RecordedRequest | undefined): string =>
  JSON.stringify(((request?.body as { messages?: ReadonlyArray<unknown> } | undefined)?.messages ?? []).at(-1))
const notes = (c: Controller) =>
  c.transcript.timeline.flatMap((item) => (item.kind === "local" ? [`${item.title}: ${item.lines.join(" ")}`] : []))

describe("plugin commands and resources in the interactive session", () => {
  it("lists a plugin's command in / completion after the command files, runs it, and attaches its @resource", {
    timeout: 30_000
  }, async () => {
    server = await startScriptedServer((request) => ({ steps: [{ text: isTitle(request) ? "A title" : "ok" }] }))
    const box = sandbox()
    const plugins = join(box.env.XDG_CONFIG_HOME ?? "", "lathe", "plugins")
    mkdirSync(plugins, { recursive: true })
    writeFileSync(join(plugins, "notes.mjs"), PLUGIN)
    mkdirSync(join(box.project, ".lathe", "commands"), { recursive: true })
    writeFileSync(
      join(box.project, ".lathe", "commands", "review.md"),
      "---\ndescription: Review a file\n---\nReview $1.\n"
    )
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
    const c = await Controller.start(
      { stdout: () => undefined, stderr: () => undefined, env, cwd: box.project, isTTY: false },
      {}
    )
    controller = c

    // What the palette lists after "/": built-ins, the command file, the plugin's command (and its later one).
    const deadline = Date.now() + 10_000
    while (!c.commands().some((command) => command.name === "later") && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20))
    const listed = c.commands().map((command) => command.name)
    assert.deepStrictEqual(listed.slice(-3), ["review", "greet", "later"])
    assert.isBelow(listed.indexOf("help"), listed.indexOf("review"))
    assert.strictEqual(c.commands().find((command) => command.name === "greet")?.description, "Greet people by name")
    assert.include(c.mentionTargets, "notes:today")

    await c.submit('/greet Ada "Grace Hopper"')
    await c.idle()
    const sent = () => server?.requests.filter((r) => !isTitle(r)).map(lastMessage) ?? []
    assert.include(sent().at(-1) ?? "", "Say hello to Ada and Grace Hopper.")

    await c.submit("/greet")
    await c.submit("/nope")
    assert.include(notes(c).join("\n"), "/greet: greet needs at least one name")
    assert.include(notes(c).join("\n"), "/nope: No command /nope.")

    await c.submit("/review src/a.ts")
    await c.idle()
    assert.include(sent().at(-1) ?? "", "Review src/a.ts.")

    await c.submit("read @notes:today please")
    await c.idle()
    assert.include(sent().at(-1) ?? "", "NOTES-OF notes:today")
    assert.strictEqual(sent().length, 3)
  })
})
