import { describe, expect, it } from "@effect/vitest"
import { Plugins } from "@lathe/core"
import { testLayer } from "@lathe/core/testing"
import { Effect } from "effect"
import { createMcpPlugin } from "../src/plugin.js"
import { everythingBin, tempDir } from "./helpers.js"

/** Runs `body` on a host that loaded the MCP plugin with server-everything over stdio (waited for). */
const withEverything = <A, E>(body: (plugins: Plugins["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        return yield* body(yield* Plugins)
      }).pipe(
        Effect.provide(
          testLayer({
            root: tempDir(),
            plugins: [createMcpPlugin()],
            config: {
              mcp: { everything: { type: "local", command: [process.execPath, everythingBin, "stdio"], wait: true } }
            }
          })
        )
      )
    )
  )

/** The host's commands, once the plugin has listed the server's prompts (it does so in the background). */
const listedCommands = (plugins: Plugins["Service"]) =>
  Effect.gen(function* () {
    const deadline = Date.now() + 15_000
    let listed = yield* plugins.commands
    while (!listed.some((c) => c.name === "everything:args-prompt") && Date.now() < deadline) {
      yield* Effect.sleep("50 millis")
      listed = yield* plugins.commands
    }
    return listed
  })

const text = (parts: ReadonlyArray<{ readonly type: string; readonly text?: string }>) =>
  parts.map((part) => part.text ?? "").join("\n")

describe("the MCP plugin's commands and resources (server-everything over stdio)", () => {
  it("lists the server's prompts as commands and runs them with key=value and positional arguments", async () => {
    const result = await withEverything((plugins) =>
      Effect.gen(function* () {
        const listed = yield* listedCommands(plugins)
        const weather = yield* plugins.runCommand("everything:args-prompt", ["state=IL", "Chicago"])
        const unknown = yield* Effect.flip(plugins.runCommand("everything:nope", []))
        const missing = yield* Effect.flip(plugins.runCommand("everything:args-prompt", []))
        const notMcp = yield* Effect.flip(plugins.runCommand("review", []))
        return { listed, weather, unknown, missing, notMcp }
      })
    )
    const args = result.listed.find((c) => c.name === "everything:args-prompt")
    expect(args).toMatchObject({
      plugin: "@lathe/mcp",
      description: expect.stringMatching(/^A prompt with two arguments/)
    })
    expect(args?.arguments.map((a) => [a.name, a.required])).toEqual([
      ["city", true],
      ["state", false]
    ])
    expect(result.listed.some((c) => c.name === "everything:simple-prompt")).toBe(true)
    expect(text(result.weather.parts)).toContain("What's weather in Chicago, IL?")
    // A name the server does not list still goes to the server, which says what it has.
    expect(result.unknown.message).toMatch(/has no prompt "nope"; its prompts are .*simple-prompt/)
    expect(result.missing.message).toContain("everything:args-prompt needs city")
    // Names of no configured server are not the MCP plugin's.
    expect(result.notMcp._tag).toBe("UnknownCommand")
  }, 60_000)

  it("lists the server's resources as <server>:<uri> and reads them, listed or not; an unreadable one says why", async () => {
    const result = await withEverything((plugins) =>
      Effect.gen(function* () {
        const listed = yield* plugins.resources
        const template = yield* plugins.readResource("everything:demo://resource/dynamic/text/7")
        const missing = yield* Effect.flip(plugins.readResource("everything:nope://missing"))
        const other = yield* Effect.flip(plugins.readResource("user:pass"))
        return { listed, template, missing, other }
      })
    )
    expect(result.listed.length).toBeGreaterThan(0)
    expect(result.listed[0]).toMatchObject({
      plugin: "@lathe/mcp",
      uri: expect.stringMatching(/^everything:demo:\/\//)
    })
    expect(result.template).toHaveLength(1)
    expect(result.template[0]).toMatchObject({ type: "text", synthetic: true })
    expect(text(result.template)).toContain(
      'The user attached the MCP resource everything:demo://resource/dynamic/text/7:\n<resource server="everything"'
    )
    expect(text(result.template)).toContain("Resource 7: This is a plaintext resource")
    expect(result.missing._tag).toBe("PluginRequestError")
    expect(result.missing.message).toMatch(/"everything" could not read nope:\/\/missing/)
    expect(result.other._tag).toBe("UnknownResource")
  }, 60_000)
})
