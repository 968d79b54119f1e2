import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { definePlugin, type PluginCommand, type PluginContext, type PluginResource } from "@lathe/plugin"
import type { LatheEvent } from "@lathe/plugin/schema"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { Bus } from "../src/contracts/bus.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { testLayer } from "../src/testing/index.js"

const root = () => mkdtempSync(join(tmpdir(), "lathe-contributions-"))

const command = (name: string, reply: string, extra: Partial<PluginCommand> = {}): PluginCommand => ({
  name,
  description: `${name} from ${reply}`,
  run: async (args, input) => `${reply}: ${args.join("|")} (${input.text})`,
  ...extra
})

/**
 * Runs `body`, then publishes a marker and returns the `plugin.error` events published before it (events are
 * delivered in order, so the marker closes the list without waiting on a clock).
 */
const pluginErrors = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const bus = yield* Bus
      const events = yield* bus.subscribe
      const value = yield* body
      yield* bus.publish({ type: "notice", level: "info", message: "end of test" })
      const seen = yield* events.pipe(
        Stream.takeUntil((event) => event.type === "notice" && event.message === "end of test"),
        Stream.runCollect
      )
      const errors = [...seen].filter(
        (event): event is Extract<LatheEvent, { type: "plugin.error" }> => event.type === "plugin.error"
      )
      return { value, errors }
    })
  )

describe("plugin commands", () => {
  it.effect("are listed in load order; the first plugin keeps a name and the other is reported once", () => {
    const a = definePlugin({
      name: "a",
      setup: () => ({ commands: [command("review", "a"), command("plan", "a", { agent: "plan", model: "p/m" })] })
    })
    const b = definePlugin({ name: "b", setup: () => ({ commands: [command("review", "b"), command("ship", "b")] }) })
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      const { value: listed, errors } = yield* pluginErrors(
        Effect.gen(function* () {
          const first = yield* plugins.commands
          yield* plugins.commands // listed again: the collision is not reported twice
          return first
        })
      )
      assert.deepStrictEqual(
        listed.map((c) => [c.name, c.plugin]),
        [
          ["review", "a"],
          ["plan", "a"],
          ["ship", "b"]
        ]
      )
      assert.strictEqual(listed[1]?.agent, "plan")
      assert.strictEqual(listed[1]?.model, "p/m")
      assert.strictEqual(errors.length, 1)
      assert.strictEqual(errors[0]?.plugin, "b")
      assert.strictEqual(errors[0]?.hook, "commands")
      assert.include(errors[0]?.message ?? "", '"/review" has the name of one from "a"')
      // The plugin list does not take contributions for hooks.
      assert.deepStrictEqual(
        plugins.list.map((p) => p.hooks),
        [[], []]
      )

      const review = yield* plugins.runCommand("review", ["x", "y z"], 'x "y z"')
      assert.deepStrictEqual(review.parts, [{ type: "text", text: 'a: x|y z (x "y z")' }])
      const plan = yield* plugins.runCommand("plan", ["now"])
      assert.deepStrictEqual(plan, { parts: [{ type: "text", text: "a: now (now)" }], agent: "plan", model: "p/m" })
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [a, b] })))
  })

  it.effect("a command's parts pass through; what it throws fails the request without a plugin.error", () => {
    const parts = [
      { type: "text" as const, text: "Look at this" },
      { type: "file" as const, url: "data:text/plain;base64,aGk=", mime: "text/plain", filename: "hi.txt" }
    ]
    const plugin = definePlugin({
      name: "kit",
      setup: () => ({
        commands: [
          { name: "attach", description: "attach a file", run: async () => parts },
          {
            name: "strict",
            description: "needs an argument",
            arguments: [{ name: "city", required: true }],
            run: async (args) => {
              if (args.length === 0) throw new Error("strict needs city")
              return args[0] ?? ""
            }
          }
        ]
      })
    })
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      const { value, errors } = yield* pluginErrors(
        Effect.gen(function* () {
          const attached = yield* plugins.runCommand("attach", [])
          const refused = yield* Effect.flip(plugins.runCommand("strict", []))
          const unknown = yield* Effect.flip(plugins.runCommand("nope", []))
          return { attached, refused, unknown }
        })
      )
      assert.deepStrictEqual(value.attached.parts, parts)
      assert.strictEqual(value.refused._tag, "PluginRequestError")
      assert.strictEqual(value.refused.message, "strict needs city")
      assert.strictEqual(value.unknown._tag, "UnknownCommand")
      assert.deepStrictEqual(errors, [])
      const listed = yield* plugins.commands
      assert.deepStrictEqual(listed[1]?.arguments, [{ name: "city", required: true }])
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [plugin] })))
  })

  it.effect("a command that does not answer within plugin_timeout_ms is reported as plugin.error and fails", () => {
    const slow = definePlugin({
      name: "slow",
      setup: () => ({
        commands: [{ name: "wait", description: "never answers", run: () => new Promise<string>(() => {}) }],
        resources: {
          list: () => new Promise<ReadonlyArray<PluginResource>>(() => {}),
          read: async () => []
        }
      })
    })
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      const { value, errors } = yield* pluginErrors(
        Effect.gen(function* () {
          // The time limit runs on the test clock: move it past the limit while each call waits.
          const waiting = yield* Effect.forkChild(Effect.flip(plugins.runCommand("wait", [])))
          yield* TestClock.adjust("1 second")
          const failed = yield* Fiber.join(waiting)
          const listing = yield* Effect.forkChild(plugins.resources)
          yield* TestClock.adjust("1 second")
          const resources = yield* Fiber.join(listing)
          return { failed, resources }
        })
      )
      assert.strictEqual(value.failed._tag, "PluginRequestError")
      assert.include(value.failed.message, "did not finish within 50 ms")
      assert.deepStrictEqual(value.resources, [])
      assert.deepStrictEqual(
        errors.map((e) => [e.plugin, e.hook]),
        [
          ["slow", "command /wait"],
          ["slow", "resources.list"]
        ]
      )
      assert.include(errors[0]?.message ?? "", "raise plugin_timeout_ms")
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [slow], config: { plugin_timeout_ms: 50 } })))
  })

  it.effect("commands set after setup (ctx.commands.set) are listed from then on, and watchers are told", () => {
    let context: PluginContext | undefined
    const late = definePlugin({
      name: "late",
      setup: (ctx) => {
        context = ctx
        return { commands: [command("fixed", "late")] }
      }
    })
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      let told = 0
      const stop = plugins.watch(() => told++)
      assert.deepStrictEqual(
        (yield* plugins.commands).map((c) => c.name),
        ["fixed"]
      )
      context?.commands.set([command("srv:hello", "server"), command("srv:bye", "server")])
      assert.deepStrictEqual(
        (yield* plugins.commands).map((c) => c.name),
        ["fixed", "srv:hello", "srv:bye"]
      )
      context?.commands.set([command("srv:hello", "server")]) // replaces what was set before; setup's stay
      assert.deepStrictEqual(
        (yield* plugins.commands).map((c) => c.name),
        ["fixed", "srv:hello"]
      )
      assert.strictEqual(told, 2)
      stop()
      context?.commands.set([])
      assert.strictEqual(told, 2)
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [late] })))
  })

  it.effect("commands may be listed lazily, and a name no plugin lists goes to findCommand", () => {
    let loads = 0
    const files = definePlugin({
      name: "files",
      setup: () => ({
        commands: async () => {
          loads++
          return [command("from-file", "files")]
        }
      })
    })
    const servers = definePlugin({
      name: "servers",
      setup: () => ({
        findCommand: async (name) => {
          if (!name.startsWith("srv:")) return undefined
          if (name === "srv:nope") throw new Error('The server "srv" has no prompt "nope"; its prompts are hello.')
          return command(name, "found")
        }
      })
    })
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      assert.strictEqual(loads, 0) // nothing is read until commands are listed
      assert.deepStrictEqual(
        (yield* plugins.commands).map((c) => c.name),
        ["from-file"]
      )
      const found = yield* plugins.runCommand("srv:hello", ["a"])
      assert.deepStrictEqual(found.parts, [{ type: "text", text: "found: a (a)" }])
      const refused = yield* Effect.flip(plugins.runCommand("srv:nope", []))
      assert.strictEqual(refused.message, 'The server "srv" has no prompt "nope"; its prompts are hello.')
      const unknown = yield* Effect.flip(plugins.runCommand("other", []))
      assert.strictEqual(unknown._tag, "UnknownCommand")
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [files, servers] })))
  })
})

describe("plugin resources", () => {
  it.effect("listings merge in load order; reading goes to the plugin that listed or accepts the URI", () => {
    const reads: Array<string> = []
    const notes = definePlugin({
      name: "notes",
      setup: () => ({
        resources: {
          list: async () => [
            { uri: "notes:today", name: "Today", mimeType: "text/markdown" },
            { uri: "shared:x", name: "Shared (notes)" }
          ],
          read: async (uri) => {
            reads.push(`notes ${uri}`)
            return [{ type: "text", text: `notes has ${uri}`, synthetic: true }]
          }
        }
      })
    })
    const server = definePlugin({
      name: "server",
      setup: () => ({
        resources: {
          list: async () => [
            { uri: "shared:x", name: "Shared (server)" },
            { uri: "srv:doc://1", name: "Doc 1", description: "the first" }
          ],
          accepts: (uri) => uri.startsWith("srv:"),
          read: async (uri) => {
            reads.push(`server ${uri}`)
            if (uri.includes("missing")) throw new Error(`could not read ${uri}`)
            return [{ type: "text", text: `server has ${uri}`, synthetic: true }]
          }
        }
      })
    })
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      assert.isTrue(plugins.hasResources)
      const listed = yield* plugins.resources
      assert.deepStrictEqual(listed, [
        { uri: "notes:today", name: "Today", mimeType: "text/markdown", plugin: "notes" },
        { uri: "shared:x", name: "Shared (notes)", plugin: "notes" },
        { uri: "srv:doc://1", name: "Doc 1", description: "the first", plugin: "server" }
      ])
      yield* plugins.readResource("notes:today")
      yield* plugins.readResource("shared:x")
      const template = yield* plugins.readResource("srv:doc://99") // not listed, but the server accepts it
      assert.deepStrictEqual(template, [{ type: "text", text: "server has srv:doc://99", synthetic: true }])
      const missing = yield* Effect.flip(plugins.readResource("srv:missing://x"))
      assert.strictEqual(missing._tag, "PluginRequestError")
      assert.strictEqual(missing.message, "could not read srv:missing://x")
      const unknown = yield* Effect.flip(plugins.readResource("user:pass"))
      assert.strictEqual(unknown._tag, "UnknownResource")
      assert.deepStrictEqual(reads, [
        "notes notes:today",
        "notes shared:x",
        "server srv:doc://99",
        "server srv:missing://x"
      ])
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [notes, server] })))
  })

  it.effect("a listing that throws is reported and left out; the others are still listed", () => {
    const broken = definePlugin({
      name: "broken",
      setup: () => ({
        resources: {
          list: async () => {
            throw new Error("index file is corrupt")
          },
          read: async () => []
        }
      })
    })
    const fine = definePlugin({
      name: "fine",
      setup: () => ({ resources: { list: async () => [{ uri: "fine:a", name: "A" }], read: async () => [] } })
    })
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      const { value, errors } = yield* pluginErrors(plugins.resources)
      assert.deepStrictEqual(
        value.map((r) => r.uri),
        ["fine:a"]
      )
      assert.deepStrictEqual(
        errors.map((e) => [e.plugin, e.hook, e.message]),
        [["broken", "resources.list", 'Plugin "broken" failed in resources.list: index file is corrupt']]
      )
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [broken, fine] })))
  })
})

describe("plugin answers: a value or a Promise, checked for shape", () => {
  // Plain JavaScript, as an author's first try writes it: no async, and sometimes the wrong thing.
  const plain = definePlugin({
    name: "plain",
    setup: () => ({
      commands: [
        { name: "wc", description: "Counts", run: (args) => `count ${args.join(" ")}` },
        { name: "broken", description: "Answers a number", run: () => 42 as unknown as string }
      ],
      resources: {
        list: () => [{ uri: "plain:one", name: "One" }],
        read: (uri) => (uri === "plain:one" ? [{ type: "text", text: "one" }] : ("nope" as unknown as []))
      }
    })
  })
  const single = definePlugin({
    name: "single",
    // One command where a list belongs.
    setup: () => ({ commands: command("solo", "single") as unknown as ReadonlyArray<PluginCommand> })
  })

  it.effect("a command or resource answering with a plain value works", () =>
    Effect.gen(function* () {
      const plugins = yield* Plugins
      const expansion = yield* plugins.runCommand("wc", ["a", "b"])
      assert.deepStrictEqual(expansion.parts, [{ type: "text", text: "count a b" }])
      assert.deepStrictEqual(yield* plugins.readResource("plain:one"), [{ type: "text", text: "one" }])
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [plain] })))
  )

  it.effect("a wrong shape is a plugin.error naming the plugin and the call, and fails only that call", () =>
    Effect.gen(function* () {
      const plugins = yield* Plugins
      const { value, errors } = yield* pluginErrors(
        Effect.gen(function* () {
          const broken = yield* Effect.flip(plugins.runCommand("broken", []))
          const listed = yield* plugins.commands
          yield* plugins.commands // listed again: the bad list is not reported twice
          return { broken, listed }
        })
      )
      assert.strictEqual(value.broken._tag, "PluginRequestError")
      assert.include(value.broken.message, 'Plugin "plain" failed in command /broken: it returned a number (42)')
      assert.deepStrictEqual(
        value.listed.map((c) => c.name),
        ["wc", "broken"]
      )
      // Finding `broken` lists every command first, which reports the bad list once.
      assert.deepStrictEqual(
        errors.map((e) => [e.plugin, e.hook]),
        [
          ["single", "commands"],
          ["plain", "command /broken"]
        ]
      )
      assert.include(errors[0]?.message ?? "", "not a list of commands")
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [plain, single] })))
  )
})
