/**
 * Walls that hold: nothing from outside an untrusted project enters the system prompt. A committed `AGENTS.md`
 * symlink, a relative `instructions` glob matching a symlink, a symlinked folder and an absolute `instructions`
 * entry all reached a secret outside the project (real files, real symlinks); in a trusted project they still do,
 * in an untrusted one they are skipped with a notice. The person's own outside instructions keep working.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { Config } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"
import { Bus } from "../src/contracts/bus.js"
import { SystemPrompt } from "../src/loop/system-prompt.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { SessionStore } from "../src/store/session-store.js"

const SECRET = "SECRET-MARKER-7f3a"

const setup = () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-instructions-")))
  const root = join(base, "repo")
  const outside = join(base, "outside")
  for (const dir of [join(root, "docs"), outside, join(base, "global"), join(base, "data")])
    mkdirSync(dir, { recursive: true })
  for (const name of ["agents", "abs", "glob", "folder"])
    writeFileSync(join(outside, `${name}.md`), `${SECRET} (${name}) aws_secret_access_key=AKIA...`)
  writeFileSync(join(outside, "mine.md"), "The person's own rule.")
  symlinkSync(join(outside, "agents.md"), join(root, "AGENTS.md"))
  symlinkSync(join(outside, "glob.md"), join(root, "docs", "leak.md"))
  symlinkSync(outside, join(root, "linked"))
  writeFileSync(join(root, "docs", "style.md"), "Use tabs.")
  writeFileSync(
    join(base, "global", "lathe.json"),
    JSON.stringify({ instructions: [join(outside, "mine.md")] }) // the person's, outside the project: read
  )
  writeFileSync(
    join(root, "lathe.json"),
    JSON.stringify({ instructions: [join(outside, "abs.md"), "docs/*.md", "linked/folder.md"] })
  )
  const trust = () => writeFileSync(join(base, "data", "trust.json"), JSON.stringify({ trusted: [root] }))
  const paths = Paths.layerTest(root, { config: join(base, "global"), data: join(base, "data"), home: base })
  const services = Layer.mergeAll(Config.layerWith({}), Bus.layer, SessionStore.memory).pipe(Layer.provideMerge(paths))
  const layer = SystemPrompt.layer.pipe(Layer.provideMerge(Plugins.layer([]).pipe(Layer.provideMerge(services))))
  /** The rules text of `sessions` (one call each, in order) and the notices published meanwhile. */
  const rules = (...sessions: ReadonlyArray<string | (() => void)>) =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const events = yield* bus.subscribe
      const prompt = yield* SystemPrompt
      const texts: Array<string> = []
      for (const step of sessions)
        if (typeof step === "function") step()
        else texts.push((yield* prompt.rules(step)).join("\n\n"))
      yield* bus.publish({ type: "notice", level: "info", message: "end" })
      const published = yield* events.pipe(
        Stream.takeUntil((event) => event.type === "notice" && event.message === "end"),
        Stream.runCollect
      )
      const notices = [...published].flatMap((e) => (e.type === "notice" && e.message !== "end" ? [e.message] : []))
      return { texts, notices }
    }).pipe(Effect.scoped, Effect.provide(layer))
  return { base, root, outside, trust, rules }
}

describe("SystemPrompt rules files and instructions in an untrusted project", () => {
  it.live("symlinks and outside paths are read when trusted, skipped with a notice when not", () => {
    const t = setup()
    // The payload works: the committed AGENTS.md is the secret.
    assert.include(readFileSync(join(t.root, "AGENTS.md"), "utf8"), SECRET)
    return Effect.gen(function* () {
      const untrusted = yield* t.rules("s1")
      const text = untrusted.texts[0] ?? ""
      assert.notInclude(text, SECRET)
      assert.include(text, `Instructions from ${join(t.root, "docs", "style.md")}:\nUse tabs.`)
      assert.include(text, `Instructions from ${join(t.outside, "mine.md")}:\nThe person's own rule.`)
      const skipped = (file: string, real: string) =>
        `Ignored from untrusted ${t.root}: rules file ${file} (its real path ${real} is outside the project). ` +
        `Run \`lathe trust\` in ${t.root} to trust this folder.`
      assert.sameMembers(untrusted.notices, [
        skipped(join(t.root, "AGENTS.md"), join(t.outside, "agents.md")),
        skipped(join(t.root, "docs", "leak.md"), join(t.outside, "glob.md")),
        skipped(join(t.root, "linked", "folder.md"), join(t.outside, "folder.md"))
      ])

      // Trusted (what every project got before): all of it reaches the prompt.
      t.trust()
      const trusted = yield* t.rules("s1")
      for (const name of ["agents", "abs", "glob", "folder"]) assert.include(trusted.texts[0], `${SECRET} (${name})`)
      assert.deepStrictEqual(trusted.notices, [])
    })
  })

  it.live("a rules file swapped for a symlink mid-session is not read on the next step", () => {
    const t = setup()
    rmSync(join(t.root, "AGENTS.md"))
    writeFileSync(join(t.root, "AGENTS.md"), "Project rules.")
    const swap = () => {
      rmSync(join(t.root, "AGENTS.md"))
      symlinkSync(join(t.outside, "agents.md"), join(t.root, "AGENTS.md"))
    }
    return Effect.gen(function* () {
      const { texts, notices } = yield* t.rules("s1", swap, "s1")
      assert.include(texts[0], "Project rules.")
      assert.notInclude(texts[1], SECRET)
      assert.notInclude(texts[1], "Project rules.")
      assert.isTrue(notices.some((notice) => notice.includes(`rules file ${join(t.root, "AGENTS.md")}`)))
    })
  })
})
