import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Config, Paths, Plugins } from "@lathe/core"
import { resolveServers } from "@lathe/mcp/host"
import { Effect } from "effect"
import { runOnApp } from "../app.js"
import { defineCommand, parseCommand, pickSubcommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"

const listSpec = defineCommand({
  name: "plugin list",
  summary:
    "Every plugin this project loads: where it came from, its hooks, tools, agents and commands, and why some failed",
  description: `Every plugin this project loads: where it came from, its hooks, tools, agents and commands, and the plugins
that failed to load with what to do about it.`,
  options: { json: { type: "boolean", description: "Print them as JSON" } }
})

const initSpec = defineCommand({
  name: "plugin init",
  summary: "Scaffold a publishable plugin package in ./<name>",
  usage: ["<name>"],
  description: `Scaffolds a publishable plugin package in ./<name> (package.json, src/index.ts with one hook and one tool on
@lathe/plugin, a test that runs a real turn with its runPluginTurn, README). Run from a checkout of Lathe, it
depends on that checkout's packages/plugin and packages/core (file:), so npm install works before they are on npm;
installed from npm, on the same version as this CLI.`,
  positionals: { name: "<name>", max: 1 }
})

/** `lathe plugin`, declared once for the command kit. */
export const pluginSpec = defineCommand({
  name: "plugin",
  usage: ["<list | init <name>> [options]"],
  description: `Plugins load from the built-ins, then lathe.json "plugin" (package names, paths, ["name", { options }]), then
.lathe/plugins/*.{ts,mts,js,mjs} (trusted projects only) and ~/.config/lathe/plugins/. See docs/plugins.md.`,
  subcommands: [listSpec, initSpec]
})

const list = async (json: boolean, io: CliIO): Promise<number> => {
  const program = Effect.gen(function* () {
    const plugins = yield* Plugins
    const config = yield* Config
    const paths = yield* Paths
    const commands = yield* plugins.commands
    return { plugins, config, paths, commands }
  })
  // MCP servers are not started to list plugins: their tools are listed by `lathe mcp tools <server>`.
  const result = await runOnApp(io, program, { mcp: false })
  if (!result.ok) {
    io.stderr(`lathe plugin list: ${result.message}\n`)
    return 1
  }
  const { plugins, config, paths, commands } = result.value
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
    const own = commands.filter((command) => command.plugin === plugin.name).map((command) => `/${command.name}`)
    if (own.length > 0) lines.push(`  commands: ${own.join(", ")}`)
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

/**
 * Where a new plugin's `@lathe/core` comes from: this checkout's `packages/core` when the CLI runs from a checkout of
 * Lathe (its `@lathe/cli` folder is `<checkout>/packages/cli`), else the npm version the CLI itself has.
 */
export type CoreSource =
  | { readonly kind: "checkout"; readonly path: string }
  | { readonly kind: "npm"; readonly version: string }

/** Finds {@link CoreSource} from this module's location: `src/commands/`, `dist/…` or `dist/bundle/`. */
export const coreSource = (from: string = fileURLToPath(import.meta.url)): CoreSource => {
  let dir = dirname(from)
  for (let up = 0; up < 5; up++, dir = dirname(dir)) {
    let pkg: { readonly name?: unknown; readonly version?: unknown }
    try {
      pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as typeof pkg
    } catch {
      continue
    }
    if (pkg.name !== "@lathe/cli") continue
    const core = join(dirname(dir), "core")
    if (basename(dirname(dir)) === "packages" && existsSync(join(core, "package.json")))
      return { kind: "checkout", path: core }
    return { kind: "npm", version: typeof pkg.version === "string" ? pkg.version : "0.0.0" }
  }
  return { kind: "npm", version: "0.0.0" }
}

/** The vitest config of a scaffold whose `@lathe/core` is a checkout's: its source, so no build is needed. */
const checkoutVitestConfig = (core: string) => `import { defineConfig } from "vitest/config"

// @lathe/plugin and @lathe/core come from the Lathe checkout at ${dirname(core)} (file: dependencies, until they
// are on npm): load their TypeScript source, so the checkout needs no build. When you switch package.json to
// published versions, delete this file.
export default defineConfig({
  resolve: { conditions: ["@lathe/source"] },
  ssr: { resolve: { conditions: ["@lathe/source"] } }
})
`

/** The files of a new plugin package. */
const scaffold = (name: string, source: CoreSource): Record<string, string> => {
  const id = name.replace(/^@[^/]+\//, "")
  const core = source.kind === "checkout" ? `file:${source.path}` : `^${source.version}`
  const kit = source.kind === "checkout" ? `file:${join(dirname(source.path), "plugin")}` : `^${source.version}`
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
        peerDependencies: { "@lathe/plugin": source.kind === "checkout" ? "*" : kit },
        // @lathe/core is what the author kit re-exports; named here so a checkout's copy is the one installed.
        devDependencies: { "@lathe/core": core, "@lathe/plugin": kit, vitest: "5.1.1", zod: "4.6.7" }
      },
      null,
      2
    )}\n`,
    ...(source.kind === "checkout" ? { "vitest.config.ts": checkoutVitestConfig(source.path) } : {}),
    "src/index.ts": `import { definePlugin, Tool } from "@lathe/plugin"
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
    "test/index.test.ts": `import { runPluginTurn } from "@lathe/plugin/testing"
import { expect, it } from "vitest"
import plugin from "../src/index.js"

it("adds its system line and its tool works in a real turn", async () => {
  const turn = await runPluginTurn({
    plugins: [plugin],
    steps: [
      { steps: [{ tool: "word_count", input: { text: "one two three" } }] },
      { steps: [{ text: "Three words." }] }
    ]
  })
  expect(turn.requests[0]?.system.join("\\n")).toContain("This project lives in ")
  expect(JSON.stringify(turn.requests[1]?.messages)).toContain('"value":"3"')
  expect(turn.text).toBe("Three words.")
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
${
  source.kind === "checkout"
    ? `
\`@lathe/plugin\` and \`@lathe/core\` come from the Lathe checkout at \`${dirname(source.path)}\` (\`file:\` in
package.json, and \`vitest.config.ts\` loads their source) while it is not on npm. Once it is, set versions in
package.json and delete \`vitest.config.ts\`.
`
    : ""
}`
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
  const source = coreSource()
  const files = scaffold(name, source)
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(join(dir, file, ".."), { recursive: true })
    writeFileSync(join(dir, file), content)
  }
  const from =
    source.kind === "checkout"
      ? `@lathe/core comes from this Lathe checkout (file:${source.path}), and @lathe/plugin from ` +
        `file:${join(dirname(source.path), "plugin")}, until they are on npm.\n`
      : ""
  io.stdout(`Created ${dir}: ${Object.keys(files).join(", ")}.\n${from}Next: cd ${dir} && npm install && npm test\n`)
  return 0
}

/** `lathe plugin list` / `lathe plugin init <name>`. */
export const pluginCommand: Command = async (args, io) => {
  const sub = pickSubcommand(pluginSpec, args, io)
  if (typeof sub === "number") return sub
  const parsed = parseCommand(sub.name === "list" ? listSpec : initSpec, sub.rest, io)
  if (typeof parsed === "number") return parsed
  if (sub.name === "list") return list(parsed.values.json === true, io)
  return init(parsed.positionals, io)
}
