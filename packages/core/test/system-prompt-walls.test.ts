/**
 * Untrusted globs decided per match, and caps on rules text. Node's glob (the one Lathe uses) resolves a parent spelled
 * `[.][.]` or `.{.,x}`, which no pattern check sees; the wall is the real path of each match at read time. A 30 MB
 * `AGENTS.md` was sent whole in every request; now each file is read only up to its cap and the total is capped too.
 */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs"
import { glob } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { Config } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"
import { MAX_RULES_FILE_BYTES, MAX_RULES_TOTAL_BYTES, startupRules } from "../src/config/rules-files.js"
import { Bus } from "../src/contracts/bus.js"
import { SystemPrompt } from "../src/loop/system-prompt.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { SessionStore } from "../src/store/session-store.js"

const SECRET = "SECRET-MARKER-91c2"

/** Every match of `pattern`, as Node's glob gives them. */
const globAll = async (pattern: string): Promise<Array<string>> => {
  const out: Array<string> = []
  for await (const match of glob(pattern)) out.push(match)
  return out
}

/** `base/repo` (the project), `base/outside`, `base/global` (the person's config), `base/data`. */
const world = (project: unknown, global: unknown = {}) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-walls-")))
  const root = join(base, "repo")
  const outside = join(base, "outside")
  for (const dir of [root, outside, join(base, "global"), join(base, "data")]) mkdirSync(dir, { recursive: true })
  writeFileSync(join(outside, "secret.md"), `${SECRET} ssh-ed25519 AAAA`)
  writeFileSync(join(outside, "mine.md"), "MY-OWN-RULE")
  writeFileSync(join(root, "lathe.json"), JSON.stringify(project))
  writeFileSync(join(base, "global", "lathe.json"), JSON.stringify(global))
  const paths = Paths.layerTest(root, { config: join(base, "global"), data: join(base, "data"), home: base })
  const services = Layer.mergeAll(Config.layerWith({}), Bus.layer, SessionStore.memory).pipe(Layer.provideMerge(paths))
  const layer = SystemPrompt.layer.pipe(Layer.provideMerge(Plugins.layer([]).pipe(Layer.provideMerge(services))))
  const rules = Effect.gen(function* () {
    const bus = yield* Bus
    const events = yield* bus.subscribe
    const text = (yield* (yield* SystemPrompt).rules("s1")).join("\n\n")
    yield* bus.publish({ type: "notice", level: "info", message: "end" })
    const published = yield* events.pipe(
      Stream.takeUntil((event) => event.type === "notice" && event.message === "end"),
      Stream.runCollect
    )
    const notices = [...published].flatMap((e) => (e.type === "notice" && e.message !== "end" ? [e.message] : []))
    return { text, notices }
  }).pipe(Effect.scoped, Effect.provide(layer))
  return { base, root, outside, rules }
}

const PAYLOADS = ["[.][.]/outside/secret.md", ".{.,x}/outside/secret.md", "[.][.]/*/secret.md", "linked/*.md"]

describe("untrusted instructions globs, decided per match", () => {
  it.live("Node's glob resolves the parent; an untrusted project's globs still send no secret", () => {
    const w = world({ instructions: PAYLOADS })
    symlinkSync(w.outside, join(w.root, "linked"))
    return Effect.gen(function* () {
      // The payload bites without Lathe: each pattern, resolved at the root, matches the file outside it.
      for (const pattern of PAYLOADS) {
        const matches = yield* Effect.promise(() => globAll(resolve(w.root, pattern)))
        assert.include(
          matches.map((m) => realpathSync(m)),
          join(w.outside, "secret.md"),
          pattern
        )
      }
      const { text, notices } = yield* w.rules
      assert.notInclude(text, SECRET)
      // A glob that reaches the parent is not searched there, and the person is told.
      for (const pattern of PAYLOADS.slice(0, 3))
        assert.include(
          notices,
          `Ignored from untrusted ${w.root}: instructions ${JSON.stringify(pattern)} reaches ${w.base}, outside the ` +
            `project: not searched. Run \`lathe trust\` in ${w.root} to trust this folder.`
        )
      // The symlinked folder's match is inside as written: skipped with a notice naming where it leads.
      assert.isTrue(
        notices.some((n) => n.includes(`rules file ${join(w.root, "linked", "secret.md")}`)),
        notices[0]
      )
    })
  })

  it.live("the person's own config may still name files outside the project, with the same patterns", () => {
    const w = world({}, { instructions: ["[.][.]/outside/mine.md", join("..", "outside", "secret.md")] })
    return Effect.gen(function* () {
      const { text } = yield* w.rules
      assert.include(text, "MY-OWN-RULE")
      assert.include(text, SECRET)
    })
  })

  it.effect("startupRules: an untrusted glob does not walk out of the root; its literal paths are never personal", () =>
    Effect.gen(function* () {
      const w = world({})
      writeFileSync(join(w.root, "RULES.md"), "inside")
      const found = yield* Effect.promise(() =>
        startupRules({
          directory: w.root,
          root: w.root,
          home: w.base,
          configDir: join(w.base, "global"),
          instructions: ["[.][.]/outside/*.md", join(w.outside, "secret.md"), "~/outside/secret.md", "R*.md"],
          untrustedInstructions: ["[.][.]/outside/*.md", join(w.outside, "secret.md"), "~/outside/secret.md", "R*.md"]
        })
      )
      const instructions = found.filter(
        (f) => !f.file.startsWith(join(w.base, "global")) && !f.file.includes(".claude")
      )
      assert.deepStrictEqual(instructions, [
        { file: join(w.outside, "secret.md"), personal: false },
        { file: join(w.root, "RULES.md"), personal: false }
      ])
    })
  )
})

describe("rules caps", () => {
  it.live("a 30 MB AGENTS.md is read and sent only up to 256 KiB, said in the text and in a notice", () => {
    const w = world({})
    const file = join(w.root, "AGENTS.md")
    writeFileSync(file, `FIRST-LINE\n${"x".repeat(30 * 1024 * 1024)}\nLAST-LINE`)
    return Effect.gen(function* () {
      const { text, notices } = yield* w.rules
      assert.include(text, "FIRST-LINE")
      assert.notInclude(text, "LAST-LINE")
      assert.isBelow(Buffer.byteLength(text), MAX_RULES_FILE_BYTES + 1024)
      assert.include(
        text,
        `[Cut: ${file} is ${30 * 1024 * 1024 + 21} bytes; only its first 262144 bytes are included.]`
      )
      assert.isTrue(notices.some((n) => n.startsWith(`Rules file ${file} is `) && n.includes("256 KiB")))
    })
  })

  it.live("a cut never splits a UTF-8 character", () => {
    const w = world({})
    writeFileSync(join(w.root, "AGENTS.md"), `a${"é".repeat(MAX_RULES_FILE_BYTES)}`)
    return Effect.gen(function* () {
      const { text } = yield* w.rules
      assert.notInclude(text, "\uFFFD")
    })
  })

  it.live("the rules stop at 1 MiB in all: the file that crosses it is cut, later ones left out, each named", () => {
    const names = ["a", "b", "c", "d", "e", "f"].map((n) => `docs/${n}.md`)
    const w = world({ instructions: names })
    mkdirSync(join(w.root, "docs"))
    for (const name of names) writeFileSync(join(w.root, name), `${name}\n${"y".repeat(250 * 1024)}`)
    return Effect.gen(function* () {
      const { text, notices } = yield* w.rules
      assert.isBelow(Buffer.byteLength(text), MAX_RULES_TOTAL_BYTES + 4096)
      assert.include(text, "docs/d.md")
      assert.include(text, "[Cut: the rules reach the 1048576-byte cap here.]")
      assert.include(
        notices,
        `Rules file ${join(w.root, "docs/e.md")} cut: the rules reach 1048576 bytes (1 MiB cap) within it.`
      )
      assert.include(
        notices,
        `Rules file ${join(w.root, "docs/f.md")} left out: the rules already reach 1048576 bytes (1 MiB cap).`
      )
    })
  })
})
