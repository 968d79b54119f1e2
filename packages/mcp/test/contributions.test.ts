import { describe, expect, it } from "@effect/vitest"
import {
  listCommands,
  listResources,
  readResource,
  runCommand,
  type SetUpPlugin,
  setUpPlugin
} from "@lathe/plugin/testing"
import { createMcpPlugin } from "../src/plugin.js"
import { everythingBin, tempDir } from "./helpers.js"

/** Runs `body` with the MCP plugin set up (the kit's harness) with server-everything over stdio (waited for). */
const withEverything = async <A>(body: (plugin: SetUpPlugin) => Promise<A>): Promise<A> => {
  const plugin = await setUpPlugin(createMcpPlugin(), {
    root: tempDir(),
    config: { mcp: { everything: { type: "local", command: [process.execPath, everythingBin, "stdio"], wait: true } } }
  })
  try {
    return await body(plugin)
  } finally {
    await plugin.hooks.dispose?.()
  }
}

/** The plugin's commands, once it has listed the server's prompts (it does so in the background). */
const listedCommands = async (plugin: SetUpPlugin) => {
  const deadline = Date.now() + 15_000
  let listed = await listCommands(plugin)
  while (!listed.some((c) => c.name === "everything:args-prompt") && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    listed = await listCommands(plugin)
  }
  return listed
}

/** What a rejection says. */
const failure = (promise: Promise<unknown>): Promise<Error> =>
  promise.then(
    () => {
      throw new Error("expected a rejection")
    },
    (error: unknown) => (error instanceof Error ? error : new Error(String(error)))
  )

const text = (parts: ReadonlyArray<{ readonly type: string; readonly text?: string }>) =>
  parts.map((part) => part.text ?? "").join("\n")

// Through the kit's harness: how the host lists and names them (`plugin`, `UnknownCommand`, …) is the host's, tested
// in core's plugin-contributions tests.
describe("the MCP plugin's commands and resources (server-everything over stdio)", () => {
  it("lists the server's prompts as commands and runs them with key=value and positional arguments", async () => {
    const result = await withEverything(async (plugin) => {
      const listed = await listedCommands(plugin)
      const weather = await runCommand(plugin, "everything:args-prompt", ["state=IL", "Chicago"])
      const unknown = await failure(runCommand(plugin, "everything:nope", []))
      const missing = await failure(runCommand(plugin, "everything:args-prompt", []))
      const notMcp = await failure(runCommand(plugin, "review", []))
      return { listed, weather, unknown, missing, notMcp }
    })
    const args = result.listed.find((c) => c.name === "everything:args-prompt")
    expect(args?.description).toMatch(/^A prompt with two arguments/)
    expect(args?.arguments?.map((a) => [a.name, a.required])).toEqual([
      ["city", true],
      ["state", false]
    ])
    expect(result.listed.some((c) => c.name === "everything:simple-prompt")).toBe(true)
    expect(result.weather.text).toContain("What's weather in Chicago, IL?")
    // A name the server does not list still goes to the server, which says what it has.
    expect(result.unknown.message).toMatch(/has no prompt "nope"; its prompts are .*simple-prompt/)
    expect(result.missing.message).toContain("everything:args-prompt needs city")
    // Names of no configured server are not the MCP plugin's.
    expect(result.notMcp.message).toContain('No command "review"')
  }, 60_000)

  it("lists the server's resources as <server>:<uri> and reads them, listed or not; an unreadable one says why", async () => {
    const result = await withEverything(async (plugin) => {
      const listed = await listResources(plugin)
      const template = await readResource(plugin, "everything:demo://resource/dynamic/text/7")
      const missing = await failure(readResource(plugin, "everything:nope://missing"))
      const other = await failure(readResource(plugin, "user:pass"))
      return { listed, template, missing, other }
    })
    expect(result.listed.length).toBeGreaterThan(0)
    expect(result.listed[0]?.uri).toMatch(/^everything:demo:\/\//)
    expect(result.template).toHaveLength(1)
    expect(result.template[0]).toMatchObject({ type: "text", synthetic: true })
    expect(text(result.template)).toContain(
      'The user attached the MCP resource everything:demo://resource/dynamic/text/7:\n<resource server="everything"'
    )
    expect(text(result.template)).toContain("Resource 7: This is a plaintext resource")
    expect(result.missing.message).toMatch(/"everything" could not read nope:\/\/missing/)
    expect(result.other.message).toContain('does not offer the resource "user:pass"')
  }, 60_000)
})
