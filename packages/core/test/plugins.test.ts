import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { definePlugin, Tool } from "@lathe/plugin"
import type { LatheEvent } from "@lathe/plugin/schema"
import { Effect, Fiber, Stream } from "effect"
import { z } from "zod"
import { Bus } from "../src/contracts/bus.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { testLayer } from "../src/testing/index.js"

const root = () => mkdtempSync(join(tmpdir(), "lathe-plugins-"))

const stepInput = { sessionID: "ses_1", agent: "build", model: { providerID: "p", modelID: "m" }, permission: [] }

describe("Plugins.trigger", () => {
  it.effect("runs hooks in load order, sequentially, on one output object", () => {
    const order: Array<string> = []
    const first = definePlugin({
      name: "first",
      setup: () => ({
        "system.transform": async (_input, output) => {
          await new Promise((resolve) => setTimeout(resolve, 20)) // slower, yet still first
          order.push("first")
          output.system.push("from first")
        }
      })
    })
    const second = definePlugin({
      name: "second",
      setup: () => ({
        "system.transform": (_input, output) => {
          order.push("second")
          // sees the first plugin's change
          output.system = output.system.map((line) => line.toUpperCase())
        }
      })
    })
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      const output = { system: ["base"] }
      const result = yield* plugins.trigger("system.transform", stepInput, output)
      assert.strictEqual(result, output)
      assert.deepStrictEqual(output.system, ["BASE", "FROM FIRST"])
      assert.deepStrictEqual(order, ["first", "second"])
      assert.isTrue(plugins.has("system.transform"))
      assert.isFalse(plugins.has("chat.params"))
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [first, second] })))
  })

  it.effect("reports a throwing hook with the plugin's name, skips it, and goes on", () => {
    const broken = definePlugin({
      name: "broken",
      setup: () => ({
        "text.complete": () => {
          throw new Error("regex exploded")
        }
      })
    })
    const fine = definePlugin({
      name: "fine",
      setup: () => ({
        "text.complete": (_input, output) => {
          output.text = `${output.text}!`
        }
      })
    })
    return Effect.gen(function* () {
      const bus = yield* Bus
      const events = yield* bus.subscribe
      const errors = yield* events.pipe(
        Stream.filter((event) => event.type === "plugin.error"),
        Stream.take(1),
        Stream.runCollect,
        Effect.forkChild
      )
      const plugins = yield* Plugins
      const output = yield* plugins.trigger(
        "text.complete",
        { sessionID: "s", messageID: "m", partID: "p" },
        { text: "hi" }
      )
      assert.deepStrictEqual(output, { text: "hi!" })
      const [error] = yield* Fiber.join(errors)
      assert.deepStrictEqual(error, {
        type: "plugin.error",
        plugin: "broken",
        hook: "text.complete",
        message: 'Plugin "broken" failed in text.complete: regex exploded'
      })
    }).pipe(Effect.scoped, Effect.provide(testLayer({ root: root(), plugins: [broken, fine] })))
  })

  it.effect("a plugin that throws at load is skipped; the others load", () =>
    Effect.gen(function* () {
      const plugins = yield* Plugins
      assert.deepStrictEqual(
        plugins.list.map((plugin) => plugin.name),
        ["good"]
      )
    }).pipe(
      Effect.provide(
        testLayer({
          root: root(),
          plugins: [
            { plugin: () => Promise.reject(new Error("missing peer dependency")), source: "./bad-plugin.ts" },
            definePlugin({ name: "good", setup: () => ({}) })
          ]
        })
      )
    )
  )
})

describe("plugin contributions", () => {
  it.effect("tools and agents from plugins are listed; a later tool with the same id wins", () => {
    const echo = (label: string) =>
      Tool.define("echo", {
        description: "Echo the text back",
        parameters: z.object({ text: z.string() }),
        mutates: false,
        execute: ({ text }) => ({ title: label, output: text })
      })
    const a = definePlugin({ name: "a", setup: () => ({ tools: [echo("from a")] }) })
    const b = definePlugin({
      name: "b",
      setup: (ctx) => ({
        tools: [echo("from b")],
        agents: [
          {
            name: "reviewer",
            description: `Reviews code in ${ctx.root}`,
            mode: "subagent",
            permission: { edit: "deny" }
          }
        ]
      })
    })
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      assert.deepStrictEqual(
        plugins.tools.map((tool) => tool.id),
        ["echo"]
      )
      assert.strictEqual(plugins.tools[0]?.description, "Echo the text back")
      const [agent] = plugins.agents
      assert.strictEqual(agent?.name, "reviewer")
      assert.strictEqual(agent?.mode, "subagent")
      assert.deepStrictEqual(agent?.permission, [
        { permission: "edit", pattern: "*", action: "deny", source: "agent reviewer" }
      ])
      assert.deepStrictEqual(plugins.list.find((p) => p.name === "b")?.agents, ["reviewer"])
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [a, b] })))
  })

  it.effect("a plugin changes its tools after setup with ctx.tools.set; the list reflects each change", () => {
    const tool = (id: string) =>
      Tool.define(id, {
        description: `The ${id} tool`,
        parameters: z.object({}),
        mutates: false,
        execute: () => ({ title: id, output: id })
      })
    let set: ((tools: ReadonlyArray<ReturnType<typeof tool>>) => void) | undefined
    const later = definePlugin({
      name: "later",
      setup: (ctx) => {
        set = ctx.tools.set
        return { tools: [tool("fixed")] }
      }
    })
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      assert.deepStrictEqual(
        plugins.tools.map((t) => t.id),
        ["fixed"]
      )
      set?.([tool("one"), tool("two")])
      assert.deepStrictEqual(
        plugins.tools.map((t) => t.id),
        ["fixed", "one", "two"]
      )
      set?.([tool("three")])
      assert.deepStrictEqual(
        plugins.tools.map((t) => t.id),
        ["fixed", "three"]
      )
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [later] })))
  })

  it.live("event hooks receive bus events in order", () => {
    const seen: Array<string> = []
    const watcher = definePlugin({
      name: "watcher",
      setup: () => ({
        event: ({ event }) => {
          if (event.type === "session.idle") seen.push(event.sessionID)
        }
      })
    })
    return Effect.gen(function* () {
      yield* Plugins
      const bus = yield* Bus
      const idle = (sessionID: string): LatheEvent => ({ type: "session.idle", sessionID })
      yield* bus.publish(idle("a"))
      yield* bus.publish(idle("b"))
      for (let i = 0; i < 100 && seen.length < 2; i++) yield* Effect.sleep("5 millis")
      assert.deepStrictEqual(seen, ["a", "b"])
    }).pipe(Effect.provide(testLayer({ root: root(), plugins: [watcher] })))
  })
})
