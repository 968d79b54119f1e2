import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { decide } from "@lathe/plugin/host"
import { Effect, Layer } from "effect"
import { Config, type ConfigEnv } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"

// Claude Code settings and OpenCode config loaded as sources: trust, precedence, env, notices, rule sources.
const world = (files: Record<string, unknown>, trusted = false) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-setup-sources-")))
  for (const dir of ["project", "global", "data"]) mkdirSync(join(base, dir))
  for (const [path, value] of Object.entries(files)) {
    mkdirSync(dirname(join(base, path)), { recursive: true })
    writeFileSync(join(base, path), typeof value === "string" ? value : JSON.stringify(value, null, 2))
  }
  const root = join(base, "project")
  if (trusted) writeFileSync(join(base, "data", "trust.json"), JSON.stringify({ trusted: [root] }))
  const paths = Paths.layerTest(root, { config: join(base, "global"), data: join(base, "data"), home: base })
  const load = (env: ConfigEnv = {}) =>
    Effect.gen(function* () {
      return yield* Config
    }).pipe(Effect.provide(Config.layerWith(env).pipe(Layer.provide(paths))))
  return { base, root, load }
}

const claudeProject = {
  "project/.claude/settings.json": {
    permissions: { allow: ["Bash(npm run test:*)"], deny: ["Bash(git push:*)"], ask: ["Read(./secrets/**)"] },
    env: { MARKER: "from-project" }
  },
  ".claude/settings.json": { permissions: { allow: ["Bash(git:*)", "WebSearch(zod)"] }, env: { USER_VAR: "1" } }
}

describe("Claude Code settings as a source", () => {
  it.effect("untrusted project: deny and ask apply, allow and env are dropped and named; user settings apply", () => {
    const w = world(claudeProject)
    return Effect.gen(function* () {
      const config = yield* w.load()
      const rules = config.info.permission
      expect(decide("bash", ["git push origin main"], rules).action).toBe("deny")
      expect(decide("bash", ["git status"], rules).action).toBe("allow")
      expect(decide("bash", ["npm run test"], rules).action).toBe("ask")
      expect(decide("read", ["secrets/key.pem"], rules).action).toBe("ask")
      const deny = rules.find((r) => r.action === "deny")
      expect(deny?.narrows).toBe(true)
      expect(deny?.source).toBe(`${w.root}/.claude/settings.json:7 (Bash(git push:*))`)
      expect(config.dropped).toEqual([
        { permission: "bash", pattern: "npm run test *", source: `${w.root}/.claude/settings.json` }
      ])
      expect(config.info.shell?.env?.set).toEqual({ USER_VAR: "1" })
      const ignored = config.notices.find((n) => n.startsWith("Ignored from untrusted")) ?? ""
      expect(ignored).toContain("permissions allow Bash(npm run test:*)")
      expect(ignored).toContain("shell.env.set")
      const understood = config.notices.find((n) => n.startsWith("Not understood")) ?? ""
      expect(understood).toContain(`${w.base}/.claude/settings.json:5 WebSearch`)
      expect(config.sources.map((s) => [s.format, s.scope, s.trusted])).toEqual([
        ["claude-code", "global", true],
        ["claude-code", "project", false]
      ])
    })
  })

  it.effect("trusted project: allow and env apply; Lathe's files win at the same level", () => {
    const w = world(
      {
        ...claudeProject,
        "global/lathe.json": { shell: { env: { set: { USER_VAR: "lathe" } } } },
        "project/lathe.json": { permission: { bash: { "npm run test -- --watch": "ask" } } }
      },
      true
    )
    return Effect.gen(function* () {
      const config = yield* w.load()
      const rules = config.info.permission
      expect(decide("bash", ["npm run test"], rules).action).toBe("allow")
      expect(decide("bash", ["npm run test -- --watch"], rules).action).toBe("ask")
      expect(decide("bash", ["git push"], rules).action).toBe("deny")
      expect(config.info.shell?.env?.set).toEqual({ USER_VAR: "lathe", MARKER: "from-project" })
      expect(config.dropped).toEqual([])
      expect(config.notices.some((n) => n.startsWith("Ignored"))).toBe(false)
    })
  })

  it.effect("deny wins over allow in one file, whatever the order, as in Claude Code", () => {
    const w = world(
      { "project/.claude/settings.local.json": { permissions: { deny: ["Bash(rm:*)"], allow: ["Bash"] } } },
      true
    )
    return Effect.gen(function* () {
      const rules = (yield* w.load()).info.permission
      expect(decide("bash", ["rm -rf /"], rules).action).toBe("deny")
      expect(decide("bash", ["ls"], rules).action).toBe("allow")
    })
  })

  it.effect("additionalDirectories become external_directory allow rules (dropped when untrusted)", () => {
    const files = {
      "project/.claude/settings.json": { permissions: { additionalDirectories: ["../shared", "~/notes"] } }
    }
    return Effect.gen(function* () {
      const trusted = world(files, true)
      const rules = (yield* trusted.load()).info.permission
      expect(decide("external_directory", [`${trusted.base}/shared/*`], rules).action).toBe("allow")
      expect(decide("external_directory", [`${trusted.base}/notes/a/*`], rules).action).toBe("allow")
      const untrusted = yield* world(files).load()
      expect(untrusted.info.permission).toEqual([])
      expect(untrusted.dropped.map((d) => d.permission)).toEqual(["external_directory", "external_directory"])
    })
  })
})

const opencodeProject = {
  "project/opencode.json": `{
    // OpenCode's own comment
    "$schema": "https://opencode.ai/config.json",
    "theme": "tokyonight",
    "model": "anthropic/from-opencode",
    "permission": { "bash": { "*": "allow", "rm *": "deny" }, "edit": "ask" },
    "mcp": { "tracker": { "type": "local", "command": ["node", "tracker.js"] } },
    "instructions": ["docs/*.md", "../outside.md"],
    "agent": { "build": { "permission": { "webfetch": "allow" } } },
  }`
}

describe("OpenCode config as a source", () => {
  it.effect("untrusted project: only what narrows applies (same rule as lathe.json); unknown keys are noticed", () => {
    const w = world(opencodeProject)
    return Effect.gen(function* () {
      const config = yield* w.load()
      const rules = config.info.permission
      expect(decide("bash", ["rm -rf x"], rules).action).toBe("deny")
      expect(decide("bash", ["ls"], rules).action).toBe("ask")
      expect(decide("edit", ["a.ts"], rules).action).toBe("ask")
      expect(config.info.mcp).toBeUndefined()
      expect(config.info.model).toBeUndefined()
      expect(config.info.instructions).toEqual(["docs/*.md"])
      expect(config.info.agent.build?.permission).toEqual([])
      const ignored = config.notices.find((n) => n.startsWith("Ignored from untrusted")) ?? ""
      for (const item of ["permission allow rules (bash: *)", "mcp servers (tracker)", "model", '"../outside.md"'])
        expect(ignored).toContain(item)
      expect(config.notices.find((n) => n.startsWith("Not understood"))).toContain(`${w.root}/opencode.json: theme`)
      expect(config.dropped.map((d) => `${d.agent ?? ""} ${d.permission}: ${d.pattern}`)).toEqual([
        " bash: *",
        "build webfetch: *"
      ])
    })
  })

  it.effect("trusted project: permission, mcp, instructions, agent apply; project lathe.json wins over it", () => {
    const w = world({ ...opencodeProject, "project/lathe.json": { model: "anthropic/from-lathe" } }, true)
    return Effect.gen(function* () {
      const config = yield* w.load()
      expect(decide("bash", ["ls"], config.info.permission).action).toBe("allow")
      expect(config.info.mcp?.tracker).toEqual({ type: "local", command: ["node", "tracker.js"] })
      expect(config.info.model).toBe("anthropic/from-lathe")
      expect(config.info.instructions).toEqual(["docs/*.md", "../outside.md"])
      expect(config.info.agent.build?.permission.map((r) => r.permission)).toEqual(["webfetch"])
    })
  })

  it.effect(
    "the user's ~/.config/opencode file applies fully; {env:} works; a value Lathe cannot take is left out",
    () => {
      const w = world({
        ".config/opencode/opencode.jsonc": {
          provider: {
            local: {
              npm: "@ai-sdk/openai-compatible",
              options: { baseURL: "http://127.0.0.1:1/v1", apiKey: "{env:K}" }
            }
          },
          mcp: { broken: { type: "remote", url: "not a url" } }
        }
      })
      return Effect.gen(function* () {
        const config = yield* w.load({ K: "secret-key" })
        expect(config.info.provider?.local).toEqual({
          type: "openai-compatible",
          baseURL: "http://127.0.0.1:1/v1",
          apiKey: "secret-key"
        })
        expect(config.envResolved).toEqual([{ name: "K", value: "secret-key" }])
        expect(config.info.mcp).toBeUndefined()
        expect(config.notices.find((n) => n.startsWith("Not understood"))).toContain("mcp.broken.url")
      })
    }
  )
})
