/**
 * Bring your setup: a monorepo's nested `AGENTS.md` files reach the model when a tool first touches a file below them
 * — in a synthetic part after the call, once per session, nearest folder last — and never in the system prompt.
 * Real files in a temp dir; only the model is scripted.
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { definePlugin, Tool } from "@lathe/plugin"
import type { LatheEvent } from "@lathe/plugin/schema"
import type { ModelMessage } from "ai"
import { Effect, Fiber, Layer, Stream } from "effect"
import { z } from "zod"
import { Bus } from "../src/contracts/bus.js"
import type { LLMRequest } from "../src/llm/llm.js"
import { SessionPrompt } from "../src/loop/session-prompt.js"
import { SystemPrompt } from "../src/loop/system-prompt.js"
import { createSession } from "../src/store/session.js"
import { makeMemoryStore, SessionStore } from "../src/store/session-store.js"
import { chunks, ScriptedLLM, testLoopLayer } from "../src/testing/index.js"
import { tempRoot } from "./loop-helpers.js"

const usage = { input: 100, output: 20 }
const done = [chunks.text("done"), chunks.finish(usage)]
const call = (id: string, tool: string, input: unknown) => [
  chunks.toolCall(id, tool, input),
  chunks.finish(usage, "tool-calls")
]

/** A read tool that declares the file it touches, as `@lathe/tools`' read does. */
const ReadTool = Tool.define("read", {
  description: "Reads a file",
  parameters: z.object({ filePath: z.string() }),
  mutates: false,
  paths: (args) => [args.filePath],
  execute: async ({ filePath }, ctx) => ({
    title: filePath,
    output: readFileSync(resolve(ctx.directory, filePath), "utf8")
  })
})

/** A search that names a file but declares none (too broad to load rules for). */
const SearchTool = Tool.define("search", {
  description: "Searches",
  parameters: z.object({ filePath: z.string() }),
  mutates: false,
  execute: async ({ filePath }) => ({ title: filePath, output: "no match" })
})

const tools = definePlugin({ name: "fixture-tools", setup: () => ({ tools: [ReadTool, SearchTool] }) })

/** The fixture monorepo: rules at the root, in packages/api and packages/api/src, and in packages/web. */
const monorepo = () => {
  const root = realpathSync(tempRoot())
  const files: Record<string, string> = {
    "AGENTS.md": "ROOT-RULE: run npm test.",
    "packages/api/AGENTS.md": "API-RULE: never log tokens.",
    "packages/api/src/AGENTS.md": "SRC-RULE: one export per file.",
    "packages/api/src/x.ts": "export const x = 1\n",
    "packages/api/src/y.ts": "export const y = 2\n",
    "packages/web/AGENTS.md": "WEB-RULE: use signals.",
    "packages/web/z.ts": "export const z = 3\n"
  }
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

/** Everything the model was sent in a request's messages, as JSON. */
const sent = (request: LLMRequest | undefined): string => JSON.stringify(request?.messages ?? [])
const count = (text: string, marker: string): number => text.split(marker).length - 1

/** The user-side texts of a request that follow a tool result (the synthetic rules parts). */
const addedTexts = (messages: ReadonlyArray<ModelMessage>): Array<string> =>
  messages.flatMap((message, i) =>
    message.role === "user" && messages[i - 1]?.role === "tool" && typeof message.content !== "string"
      ? message.content.flatMap((part) => (part.type === "text" ? [part.text] : []))
      : []
  )

/** Runs prompts in one session, collecting the events of each turn. */
const session = Effect.gen(function* () {
  const bus = yield* Bus
  const prompt = yield* SessionPrompt
  const created = yield* createSession({ title: "test" })
  const turn = (text: string) =>
    Effect.gen(function* () {
      const collected = yield* (yield* bus.subscribe).pipe(
        Stream.takeUntil((event) => event.type === "session.idle"),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      yield* prompt.prompt({ sessionID: created.id, parts: [{ type: "text", text }], title: false })
      return Array.from(yield* Fiber.join(collected))
    }).pipe(Effect.scoped)
  return { id: created.id, turn }
})

const notices = (events: ReadonlyArray<LatheEvent>) =>
  events.flatMap((event) => (event.type === "notice" ? [`${event.level}: ${event.message}`] : []))

describe("setup-rules: nested rules files", () => {
  it.live("a read below packages/api adds its rules once, after the call, nearest last; a new session again", () => {
    const root = monorepo()
    return Effect.gen(function* () {
      const first = yield* session
      const events = yield* first.turn("look at x")
      const requests = yield* (yield* ScriptedLLM).requests
      const [before, afterRead, afterSecondRead, afterSearch] = requests
      // Not before: the first request has the root rules in the system prompt and nothing nested anywhere.
      assert.include(before?.system.join("\n"), "ROOT-RULE")
      for (const marker of ["API-RULE", "SRC-RULE", "WEB-RULE"]) {
        assert.notInclude(sent(before), marker)
        for (const request of requests) assert.notInclude(request.system.join("\n"), marker)
      }
      // The system prompt never changes (prompt caching).
      for (const request of requests) assert.deepStrictEqual(request.system, before?.system)
      // After the read: one synthetic part following the tool result, packages/api first, packages/api/src last.
      const added = addedTexts(afterRead?.messages ?? [])
      assert.lengthOf(added, 1)
      const text = added[0] ?? ""
      assert.include(text, `Instructions from ${join(root, "packages/api/AGENTS.md")}`)
      assert.isBelow(text.indexOf("API-RULE"), text.indexOf("SRC-RULE"))
      assert.notInclude(text, "ROOT-RULE")
      assert.notInclude(text, "WEB-RULE")
      // A second read in the same folder adds nothing; later steps carry the part once, not again.
      for (const request of [afterSecondRead, afterSearch]) {
        assert.strictEqual(count(sent(request), "API-RULE"), 1)
        assert.strictEqual(count(sent(request), "SRC-RULE"), 1)
      }
      // A tool that declares no paths loads nothing, even for a file below packages/web.
      assert.notInclude(sent(afterSearch), "WEB-RULE")
      assert.deepStrictEqual(notices(events), [
        "info: rules: packages/api/AGENTS.md",
        "info: rules: packages/api/src/AGENTS.md"
      ])

      // The next turn of the same session: packages/api is not added again; packages/web is, once.
      yield* first.turn("now z")
      const [, , , , , nextTurnRead, nextTurnEnd] = yield* (yield* ScriptedLLM).requests
      assert.strictEqual(count(sent(nextTurnRead), "API-RULE"), 1)
      assert.strictEqual(count(sent(nextTurnEnd), "WEB-RULE"), 1)
      // The compaction summariser is given them too, so a summary keeps them.
      const rules = (yield* (yield* SystemPrompt).rules(first.id)).join("\n")
      for (const marker of ["ROOT-RULE", "API-RULE", "SRC-RULE", "WEB-RULE"]) assert.include(rules, marker)

      // A new session starts without them and gets them again on its first touch.
      const second = yield* session
      yield* second.turn("again")
      const all = yield* (yield* ScriptedLLM).requests
      assert.notInclude(sent(all[7]), "API-RULE")
      assert.strictEqual(count(sent(all[8]), "API-RULE"), 1)
      assert.notInclude(
        (yield* (yield* SystemPrompt).rules(second.id)).join("\n"),
        "WEB-RULE",
        "the other session's rules stay its own"
      )
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root,
          plugins: [tools],
          steps: [
            // Turn 1: read x.ts, read y.ts (same folder), search below packages/web, done.
            call("a", "read", { filePath: "packages/api/src/x.ts" }),
            call("b", "read", { filePath: "packages/api/src/y.ts" }),
            call("c", "search", { filePath: "packages/web/z.ts" }),
            done,
            // Turn 2, same session: read x.ts again, then a file below packages/web.
            call("d", "read", { filePath: "packages/api/src/x.ts" }),
            call("e", "read", { filePath: join(root, "packages/web/z.ts") }),
            done,
            // A new session: read x.ts.
            call("f", "read", { filePath: "packages/api/src/x.ts" }),
            done
          ]
        })
      )
    )
  })

  it.live("a session resumed by another process is not given the rules its history already holds", () => {
    const root = monorepo()
    const store = makeMemoryStore() // one store, two processes' worth of services over it
    const storeLayer = Layer.succeed(SessionStore, SessionStore.of(store))
    return Effect.gen(function* () {
      const sessionID = yield* Effect.gen(function* () {
        const first = yield* session
        yield* first.turn("read x")
        return first.id
      }).pipe(
        Effect.provide(
          testLoopLayer({
            root,
            plugins: [tools],
            storeLayer,
            steps: [call("a", "read", { filePath: "packages/api/src/x.ts" }), done]
          })
        )
      )
      const requests = yield* Effect.gen(function* () {
        const bus = yield* Bus
        const collected = yield* (yield* bus.subscribe).pipe(
          Stream.takeUntil((event) => event.type === "session.idle"),
          Stream.runCollect,
          Effect.forkChild({ startImmediately: true })
        )
        yield* (yield* SessionPrompt).prompt({ sessionID, parts: [{ type: "text", text: "more" }], title: false })
        yield* Fiber.join(collected)
        return yield* (yield* ScriptedLLM).requests
      }).pipe(
        Effect.scoped,
        Effect.provide(
          testLoopLayer({
            root,
            plugins: [tools],
            storeLayer,
            steps: [
              call("b", "read", { filePath: "packages/api/src/y.ts" }),
              call("c", "read", { filePath: "packages/web/z.ts" }),
              done
            ]
          })
        )
      )
      assert.strictEqual(count(sent(requests[1]), "API-RULE"), 1, "not added again")
      assert.strictEqual(count(sent(requests[2]), "WEB-RULE"), 1, "a folder not given yet still is")
    })
  })
})
