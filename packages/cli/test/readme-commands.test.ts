import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { assert, describe, expect, it } from "vitest"

// The bundled CLI (what `./lathe` runs); Nx builds it before this package's tests.
const bundle = fileURLToPath(new URL("../dist/bundle/lathe.js", import.meta.url))
const readme = readFileSync(fileURLToPath(new URL("../../../README.md", import.meta.url)), "utf8")

/** The commands `lathe --help` lists under "Commands:". */
const helpCommands = (help: string): ReadonlySet<string> => {
  const section = help.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? ""
  return new Set([...section.matchAll(/^ {2}([a-z][a-z-]*) {2,}/gm)].map((m) => m[1] ?? ""))
}

/** Every `lathe <word>` / `./lathe <word>` in the README's code (fenced blocks and `inline` spans). */
const readmeCommands = (markdown: string): ReadonlySet<string> => {
  const fenced = [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1] ?? "")
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```/gm, "")
  const inline = [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? "")
  const names = new Set<string>()
  for (const code of [...fenced, ...inline])
    for (const m of code.matchAll(/(?:^|[\s(;&|])(?:\.\/)?lathe ([a-z][a-z-]*)\b/gm)) names.add(m[1] ?? "")
  return names
}

describe("the README's commands", () => {
  it("are the commands lathe --help lists, no more and no fewer", () => {
    assert.isTrue(existsSync(bundle), `${bundle} is missing: run npx nx run @lathe/cli:bundle`)
    const help = spawnSync(process.execPath, [bundle, "--help"], { encoding: "utf8", timeout: 20_000 })
    expect(help.status).toBe(0)
    const listed = helpCommands(help.stdout)
    expect(listed.size).toBeGreaterThan(10)
    const named = readmeCommands(readme)
    expect(
      [...named].filter((name) => !listed.has(name)),
      "named in README.md but not in lathe --help"
    ).toEqual([])
    expect(
      [...listed].filter((name) => !named.has(name)),
      "in lathe --help but missing from README.md"
    ).toEqual([])
  })

  it("finds commands in code blocks and inline code, not in prose", () => {
    const names = readmeCommands(
      'Lathe runs. lathe prose is ignored.\n```sh\n./lathe run "x"\nlathe -c\n```\nUse `lathe trust` or `lathe.json`.'
    )
    expect([...names].sort()).toEqual(["run", "trust"])
  })
})
