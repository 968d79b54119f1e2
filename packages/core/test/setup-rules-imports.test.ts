/**
 * Bring your setup: `@path` imports in rules files (relative, `~/`, nested, cycles, depth, missing), what an untrusted
 * project may import, `AGENTS.local.md` / `CLAUDE.local.md` beside their siblings, and nested rules files that lead
 * outside an untrusted project. Real files and symlinks in temp dirs, the real SystemPrompt service.
 */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { Config } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"
import { importPaths } from "../src/config/rules-imports.js"
import { Bus } from "../src/contracts/bus.js"
import { SystemPrompt } from "../src/loop/system-prompt.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { SessionStore } from "../src/store/session-store.js"

/** A temp base with `repo/` (the project), `home/` (with `.config/lathe`) and `outside/`; `files` are relative to it. */
const fixture = (files: Readonly<Record<string, string>>) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-setup-rules-")))
  for (const dir of ["repo", "home/.config/lathe", "outside", "data"]) mkdirSync(join(base, dir), { recursive: true })
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(base, path)), { recursive: true })
    writeFileSync(join(base, path), text)
  }
  return base
}

const untrustedConfig = Layer.effect(
  Config,
  Effect.gen(function* () {
    return Config.of({ ...(yield* Config), trusted: false })
  })
).pipe(Layer.provide(Config.layerTest()))

/**
 * Runs `use` against the real SystemPrompt of `<base>/repo` (working directory `directory`, relative to the repo) and
 * returns its result with the notices published meanwhile.
 */
const withRules = <A>(
  base: string,
  options: { readonly trusted: boolean; readonly directory?: string },
  use: (prompt: SystemPrompt["Service"]) => Effect.Effect<A>
) => {
  const root = join(base, "repo")
  const paths = Paths.layerTest(root, {
    directory: join(root, options.directory ?? ""),
    home: join(base, "home"),
    config: join(base, "home/.config/lathe"),
    data: join(base, "data")
  })
  const services = Layer.mergeAll(
    options.trusted ? Config.layerTest() : untrustedConfig,
    Bus.layer,
    SessionStore.memory
  )
  const layer = SystemPrompt.layer.pipe(
    Layer.provideMerge(Plugins.layer([]).pipe(Layer.provideMerge(services.pipe(Layer.provideMerge(paths)))))
  )
  return Effect.gen(function* () {
    const bus = yield* Bus
    const events = yield* bus.subscribe
    const result = yield* use(yield* SystemPrompt)
    yield* bus.publish({ type: "notice", level: "info", message: "end" })
    const published = yield* events.pipe(
      Stream.takeUntil((event) => event.type === "notice" && event.message === "end"),
      Stream.runCollect
    )
    const notices = Array.from(published).flatMap((event) =>
      event.type === "notice" && event.message !== "end" ? [event.message] : []
    )
    return { result, notices }
  }).pipe(Effect.scoped, Effect.provide(layer))
}

const rulesOf = (base: string, trusted = true) =>
  withRules(base, { trusted }, (prompt) => Effect.map(prompt.rules("s1"), (rules) => rules.join("\n\n")))

describe("setup-rules: @path imports", () => {
  it("reads @path tokens outside code, as Claude Code writes them", () => {
    const text = [
      "@docs/style.md",
      "See @./testing.md and @~/notes.md, then @../shared/AGENTS.md.",
      "Mention @alice, mail bob@example.com, decorate @Component.",
      "Inline `@docs/not-this.md` is code.",
      "```md",
      "@docs/not-in-a-fence.md",
      "```",
      "~~~",
      "@docs/nor-here.md",
      "~~~",
      "Twice: @docs/style.md",
      "Spaced: @docs/my\\ notes.md"
    ].join("\n")
    assert.deepStrictEqual(importPaths(text), [
      "docs/style.md",
      "./testing.md",
      "~/notes.md",
      "../shared/AGENTS.md",
      "docs/my notes.md"
    ])
  })

  it.effect("follows relative imports two levels deep, each labelled with who imported it", () => {
    const base = fixture({
      "repo/AGENTS.md": "Root rules.\n@docs/style.md",
      "repo/docs/style.md": "STYLE: tabs.\nMore in @../conventions/naming.md",
      "repo/conventions/naming.md": "NAMING: kebab-case files."
    })
    const repo = join(base, "repo")
    return Effect.gen(function* () {
      const { result, notices } = yield* rulesOf(base)
      assert.include(result, `Instructions from ${join(repo, "AGENTS.md")}:\nRoot rules.\n@docs/style.md`)
      assert.include(
        result,
        `Instructions from ${join(repo, "docs/style.md")} (imported by ${join(repo, "AGENTS.md")}):\nSTYLE: tabs.`
      )
      assert.include(
        result,
        `Instructions from ${join(repo, "conventions/naming.md")} (imported by ${join(repo, "docs/style.md")}):\n` +
          "NAMING: kebab-case files."
      )
      assert.isBelow(result.indexOf("STYLE"), result.indexOf("NAMING"))
      assert.deepStrictEqual(notices, [])
    })
  })

  it.effect("refuses a cycle with a notice, stops past five imports deep, and notes a missing file once", () => {
    const chain: Record<string, string> = {}
    for (let i = 1; i <= 7; i++) chain[`repo/deep/d${i}.md`] = `DEPTH-${i}\n@d${i + 1}.md`
    const base = fixture({
      "repo/AGENTS.md": "@a.md\n@deep/d1.md\n@missing.md",
      "repo/a.md": "A-RULE\n@b.md",
      "repo/b.md": "B-RULE\n@a.md",
      ...chain
    })
    const repo = join(base, "repo")
    return Effect.gen(function* () {
      const { result, notices } = yield* withRules(base, { trusted: true }, (prompt) =>
        Effect.gen(function* () {
          yield* prompt.rules("s1")
          return (yield* prompt.rules("s1")).join("\n\n")
        })
      )
      assert.strictEqual(result.split("A-RULE").length - 1, 1)
      assert.strictEqual(result.split("B-RULE").length - 1, 1)
      for (let i = 1; i <= 5; i++) assert.include(result, `DEPTH-${i}`)
      assert.notInclude(result, "DEPTH-6")
      assert.deepStrictEqual(notices, [
        `Rules file ${join(repo, "b.md")} imports @a.md, which imports it back: the cycle is not followed.`,
        `Rules file ${join(repo, "deep/d5.md")} imports @d6.md, more than 5 imports deep from ${join(repo, "AGENTS.md")}: not followed.`,
        `Rules file ${join(repo, "AGENTS.md")} imports @missing.md, but ${join(repo, "missing.md")} is not a file it can read: skipped.`
      ])
    })
  })

  it.effect("an untrusted project's import outside it is not followed; trusted, or from my own rules, it is", () => {
    const base = fixture({
      "outside/secret.md": "SECRET-MARKER aws_secret_access_key=AKIA",
      "outside/mine.md": "MY-OWN-RULE",
      "home/notes.md": "HOME-NOTE",
      "repo/AGENTS.md": "Project rules.\n@../outside/secret.md\n@linked.md",
      // ~/.config/lathe/AGENTS.md links into a dotfiles repository: its relative imports resolve there.
      "dotfiles/AGENTS.md": "Global rules.\n@../outside/mine.md\n@~/notes.md\n@shared.md",
      "dotfiles/shared.md": "DOTFILES-RULE"
    })
    const repo = join(base, "repo")
    symlinkSync(join(base, "outside/secret.md"), join(repo, "linked.md"))
    symlinkSync(join(base, "dotfiles/AGENTS.md"), join(base, "home/.config/lathe/AGENTS.md"))
    return Effect.gen(function* () {
      // Trusted: both the relative path out and the symlink reach the secret (what an untrusted project must not do).
      const trusted = yield* rulesOf(base, true)
      assert.include(trusted.result, "SECRET-MARKER")
      const untrusted = yield* rulesOf(base, false)
      assert.notInclude(untrusted.result, "SECRET-MARKER")
      // The person's own global file may import from anywhere, `~/` included.
      assert.include(untrusted.result, "MY-OWN-RULE")
      assert.include(untrusted.result, "HOME-NOTE")
      assert.include(untrusted.result, "DOTFILES-RULE")
      const refused = (path: string, file: string) =>
        `Rules file ${join(repo, "AGENTS.md")} imports @${path}: ${file} is outside the untrusted project ${repo}: ` +
        `not followed. Run \`lathe trust\` in ${repo} to trust this folder.`
      assert.deepStrictEqual(untrusted.notices, [
        refused("../outside/secret.md", join(base, "outside/secret.md")),
        refused("linked.md", `${join(repo, "linked.md")} leads to ${join(base, "outside/secret.md")}, which`)
      ])
    })
  })
})

describe("setup-rules: local rules files", () => {
  it.effect("AGENTS.local.md follows AGENTS.md; CLAUDE.local.md follows CLAUDE.md when there is no AGENTS.md", () => {
    const agents = fixture({
      "repo/AGENTS.md": "SHARED-AGENTS",
      "repo/AGENTS.local.md": "PERSONAL-AGENTS",
      "repo/CLAUDE.md": "NOT-READ"
    })
    const claude = fixture({ "repo/CLAUDE.md": "SHARED-CLAUDE", "repo/CLAUDE.local.md": "PERSONAL-CLAUDE" })
    const localOnly = fixture({ "repo/CLAUDE.local.md": "ONLY-LOCAL" })
    return Effect.gen(function* () {
      const a = (yield* rulesOf(agents)).result
      assert.isBelow(a.indexOf("SHARED-AGENTS"), a.indexOf("PERSONAL-AGENTS"))
      assert.isAbove(a.indexOf("SHARED-AGENTS"), -1)
      assert.notInclude(a, "NOT-READ")
      const c = (yield* rulesOf(claude)).result
      assert.include(c, `Instructions from ${join(claude, "repo/CLAUDE.local.md")}:\nPERSONAL-CLAUDE`)
      assert.isBelow(c.indexOf("SHARED-CLAUDE"), c.indexOf("PERSONAL-CLAUDE"))
      assert.include((yield* rulesOf(localOnly)).result, "ONLY-LOCAL")
    })
  })

  it.effect("a nested folder's AGENTS.local.md comes with its AGENTS.md, once, with a notice for each", () => {
    const base = fixture({
      "repo/AGENTS.md": "ROOT",
      "repo/pkg/AGENTS.md": "PKG-SHARED",
      "repo/pkg/AGENTS.local.md": "PKG-PERSONAL\n@docs/extra.md",
      "repo/pkg/docs/extra.md": "PKG-EXTRA"
    })
    const repo = join(base, "repo")
    return Effect.gen(function* () {
      const { result, notices } = yield* withRules(base, { trusted: true }, (prompt) =>
        Effect.gen(function* () {
          const first = yield* prompt.nested("s1", ["pkg/src/a.ts"])
          const again = yield* prompt.nested("s1", [join(repo, "pkg/b.ts")])
          const other = yield* prompt.nested("s2", ["pkg/b.ts"])
          const outsideDirectory = yield* prompt.nested("s1", ["../elsewhere/AGENTS.md", "top.ts"])
          return { first: first.join("\n\n"), again, other: other.length, outsideDirectory }
        })
      )
      assert.include(
        result.first,
        `Instructions from ${join(repo, "pkg/AGENTS.md")} (they apply to files under ${join(repo, "pkg")}):\nPKG-SHARED`
      )
      assert.isBelow(result.first.indexOf("PKG-SHARED"), result.first.indexOf("PKG-PERSONAL"))
      assert.include(result.first, "PKG-EXTRA")
      assert.notInclude(result.first, "ROOT")
      assert.deepStrictEqual(result.again, [])
      assert.strictEqual(result.other, 3, "another session gets them again")
      assert.deepStrictEqual(result.outsideDirectory, [])
      assert.deepStrictEqual(notices, [
        "rules: pkg/AGENTS.md",
        "rules: pkg/AGENTS.local.md",
        "rules: pkg/AGENTS.md",
        "rules: pkg/AGENTS.local.md"
      ])
    })
  })

  it.effect("an untrusted project's nested rules file that leads outside is skipped with a notice", () => {
    const base = fixture({ "outside/secret.md": "SECRET-MARKER", "repo/evil/e.ts": "export {}" })
    const repo = join(base, "repo")
    symlinkSync(join(base, "outside/secret.md"), join(repo, "evil/AGENTS.md"))
    const touch = (trusted: boolean) =>
      withRules(base, { trusted }, (prompt) => Effect.map(prompt.nested("s1", ["evil/e.ts"]), (r) => r.join("\n")))
    return Effect.gen(function* () {
      assert.include((yield* touch(true)).result, "SECRET-MARKER") // the payload works when followed
      const untrusted = yield* touch(false)
      assert.strictEqual(untrusted.result, "")
      assert.deepStrictEqual(untrusted.notices, [
        `Ignored from untrusted ${repo}: rules file ${join(repo, "evil/AGENTS.md")} (its real path ` +
          `${join(base, "outside/secret.md")} is outside the project). Run \`lathe trust\` in ${repo} to trust this folder.`
      ])
    })
  })

  it.effect("rules below node_modules and .git never load on touch", () => {
    const base = fixture({ "repo/node_modules/dep/AGENTS.md": "DEP-RULE", "repo/.git/AGENTS.md": "GIT-RULE" })
    return Effect.gen(function* () {
      const { result } = yield* withRules(base, { trusted: true }, (prompt) =>
        prompt.nested("s1", ["node_modules/dep/index.js", ".git/config"])
      )
      assert.deepStrictEqual(result, [])
    })
  })
})
