import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { Config, Paths, Plugins } from "@lathe/core"
import { resolveServers } from "@lathe/mcp/host"
import { Effect } from "effect"
import { runOnApp } from "../app.js"
import type { CliIO, Command } from "../io.js"

const usage = `Usage: lathe plugin <list | init <name>> [options]

  list [--json]    Every plugin this project loads: where it came from, its hooks, tools and agents, and the
                   plugins that failed to load with what to do about it.
  init <name>      Scaffold a publishable plugin package in ./<name> (package.json, src/index.ts with one
                   hook and one tool, a test that runs it with @lathe/core's test layers, README).

Plugins load from the built-ins, then lathe.json "plugin" (package names, paths, ["name", { options }]), then
.lathe/plugins/*.{ts,mts,js,mjs} (trusted projects only) and ~/.config/lathe/plugins/. See docs/plugins.md.
`

const list = async (args: ReadonlyArray<string>, io: CliIO): Promise<number> => {
  const json = args.includes("--json")
  const program = Effect.gen(function* () {
    const plugins = yield* Plugins
    const config = yield* Config
    const paths = yield* Paths
    return { plugins, config, paths }
  })
  // MCP servers are not started to list plugins: their tools are listed by `lathe mcp tools <server>`.
  const result = await runOnApp(io, program, { mcp: false })
  if (!result.ok) {
    io.stderr(`lathe plugin list: ${result.message}\n`)
    return 1
  }
  const { plugins, config, paths } = result.value
  if (json) {
    io.stdout(`${JSON.stringify({ loaded: plugins.list, failed: plugins.failed }, null, 2)}\n`)
    return plugins.failed.length > 0 ? 1 : 0
  }
  const lines: Array<string> = []
  for (const plugin of plugins.list) {
    lines.push(`${plugin.name}  (${plugin.source})`)
    if (plugin.hooks.length > 0) lines.push(`  hooks:  ${plugin.hooks.join(", ")}`)
    if (plugin.tools.length > 0) lines.push(`  tools:  ${plugin.tools.join(", ")}`)
    if (plugin.agents.length > 0) lines.push(`  agents: ${plugin.agents.join(", ")}`)
  }
  for (const failure of plugins.failed) lines.push(`✗ ${failure.message}`)
  const { servers: resolved } = await resolveServers({
    config: config.info,
    root: paths.root,
    trusted: config.trusted,
    env: io.env
  })
  const servers = resolved.filter((server) => server.enabled !== false).map((server) => server.name)
  if (servers.length > 0)
    lines.push(
      `@lathe/mcp  (MCP servers: ${servers.join(", ")}; not started here, see \`lathe mcp list\` and \`lathe mcp tools <server>\`)`
    )
  if (!config.trusted)
    lines.push("(this project is not trusted: its lathe.json plugins and .lathe/plugins are not loaded)")
  io.stdout(`${lines.join("\n")}\n`)
  return plugins.failed.length > 0 ? 1 : 0
}

/** The files of a new plugin package. */
const scaffold = (name: string): Record<string, string> => {
  const id = name.replace(/^@[^/]+\//, "")
  return {
    "package.json": `${JSON.stringify(
      {
        name,
        version: "0.1.0",
        description: `A Lathe plugin: ${id}`,
        type: "module",
        exports: { ".": "./src/index.ts" },
        files: ["src"],
        keywords: ["lathe-plugin"],
        scripts: { test: "vitest run" },
        peerDependencies: { "@lathe/core": "*" },
        devDependencies: { "@lathe/core": "*", effect: "4.1.0", vitest: "5.1.1", zod: "4.6.7" }
      },
      null,
      2
    )}\n`,
    "src/index.ts": `import { definePlugin, Tool } from "@lathe/core"
import { z } from "zod"

/** ${id}: adds a line to the system prompt and a \`word_count\` tool. */
export default definePlugin({
  name: "${name}",
  setup: async (ctx) => ({
    "system.transform": async (_input, output) => {
      output.system.push(\`This project lives in \${ctx.root}.\`)
    },
    tools: [
      Tool.define("word_count", {
        description: "Counts the words of a text.",
        parameters: z.object({ text: z.string() }),
        mutates: false,
        execute: async ({ text }) => ({ title: "word count", output: String(text.split(/\\s+/).filter(Boolean).length) })
      })
    ]
  })
})
`,
    "test/index.test.ts": `import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createSession, SessionPrompt } from "@lathe/core"
import { chunks, ScriptedLLM, testLoopLayer } from "@lathe/core/testing"
import { Effect } from "effect"
import { expect, it } from "vitest"
import plugin from "../src/index.js"

it("adds its system line and its tool works in a real turn", async () => {
  const root = mkdtempSync(join(tmpdir(), "plugin-test-"))
  const steps = [
    [chunks.toolCall("c1", "word_count", { text: "one two three" }), chunks.finish({ input: 10, output: 5 }, "tool-calls")],
    [chunks.text("Three words."), chunks.finish({ input: 10, output: 5 })]
  ]
  const requests = await Effect.runPromise(
    Effect.gen(function* () {
      const session = yield* createSession()
      yield* (yield* SessionPrompt).prompt({ sessionID: session.id, parts: [{ type: "text", text: "count" }], title: false })
      return yield* (yield* ScriptedLLM).requests
    }).pipe(Effect.provide(testLoopLayer({ root, plugins: [plugin], steps })))
  )
  expect(requests[0]?.system.join("\\n")).toContain(\`This project lives in \${root}.\`)
  expect(JSON.stringify(requests[1]?.messages)).toContain('"value":"3"')
})
`,
    "README.md": `# ${name}

A [Lathe](https://github.com/) plugin. It adds a line about the project to the system prompt and a \`word_count\`
tool.

## Install

\`\`\`sh
npm i -D ${name}
\`\`\`

then in \`lathe.json\` (a trusted project, or \`~/.config/lathe/lathe.json\`):

\`\`\`json
{ "plugin": ["${name}"] }
\`\`\`

## Develop

\`\`\`sh
npm install
npm test
\`\`\`
`
  }
}

const init = (args: ReadonlyArray<string>, io: CliIO): number => {
  const name = args[0]
  if (!name || !/^(@[a-z0-9-]+\/)?[a-z0-9][a-z0-9._-]*$/.test(name)) {
    io.stderr(
      'lathe plugin init: give the package name, e.g. lathe plugin init lathe-plugin-jira (lowercase, "-", ".").\n'
    )
    return 2
  }
  const dir = resolve(io.cwd, name.replace(/^@[^/]+\//, ""))
  if (existsSync(dir)) {
    io.stderr(`lathe plugin init: ${dir} already exists; choose another name or remove it.\n`)
    return 1
  }
  for (const [file, content] of Object.entries(scaffold(name))) {
    mkdirSync(join(dir, file, ".."), { recursive: true })
    writeFileSync(join(dir, file), content)
  }
  io.stdout(
    `Created ${dir}: package.json, src/index.ts, test/index.test.ts, README.md.\nNext: cd ${dir} && npm install && npm test\n`
  )
  return 0
}

/** `lathe plugin list` / `lathe plugin init <name>`. */
export const pluginCommand: Command = async (args, io) => {
  const { positionals, values } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    strict: true
  })
  const [sub, ...rest] = positionals
  if (values.help || sub === undefined) {
    io.stdout(usage)
    return sub === undefined && !values.help ? 2 : 0
  }
  if (sub === "list") return list(values.json ? ["--json"] : [], io)
  if (sub === "init") return init(rest, io)
  io.stderr(`lathe plugin: unknown subcommand "${sub}".\n${usage}`)
  return 2
}
