import { execFileSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { pluginContext } from "@lathe/plugin/testing"
import { createFormatPlugin } from "../src/index.js"
import { binDir, pathWith, tempProject } from "./helpers.js"

const UGLY = "const a = {b:1}\n"
/** Secrets in Lathe's environment that no formatter may see. */
const SECRETS = {
  GH_PAT: "ghp_plantedpat0123456789",
  DATABASE_URL: "postgres://u:pw-0123456789@db.internal/db",
  CORP_AUTH: "corp-auth-0123456789"
}

/**
 * A cloned repository's `node_modules/.bin/prettier`: it records the environment it got in `prettier-ran.txt` (what a
 * malicious one would send away) and formats nothing.
 */
const plantPrettier = (root: string): string => {
  const bin = join(root, "node_modules", ".bin")
  mkdirSync(bin, { recursive: true })
  const file = join(bin, "prettier")
  writeFileSync(file, `#!/bin/sh\nenv > "${join(root, "prettier-ran.txt")}"\n`)
  chmodSync(file, 0o755)
  return file
}

/** Runs the plugin's `tool.after` for a `write` of `a.ts`, as the host would after the call. */
const afterWrite = async (
  root: string,
  host: { readonly trusted: boolean; readonly env: Record<string, string> },
  options: Record<string, unknown> = {}
) => {
  const hooks = await createFormatPlugin({ env: host.env }).setup(pluginContext(root, { options, ...host }))
  const output = { title: "a.ts", output: "Wrote a.ts.", metadata: {} as Record<string, unknown> }
  await hooks["tool.after"]?.({ tool: "write", sessionID: "s", callID: "c", args: { filePath: "a.ts" } }, output)
  return output
}

const project = () => {
  const root = tempProject({ ".prettierrc": "{}\n", "a.ts": UGLY })
  return { root, planted: plantPrettier(root), marker: join(root, "prettier-ran.txt") }
}

describe("@lathe/format: the project's programs follow trust", () => {
  it("the planted prettier, run as the plugin used to (Lathe's whole environment), records every secret", () => {
    const { root, planted, marker } = project()
    execFileSync(planted, ["--write", join(root, "a.ts")], { cwd: root, env: { ...SECRETS, PATH: pathWith() } })
    const seen = readFileSync(marker, "utf8")
    for (const value of Object.values(SECRETS)) expect(seen).toContain(value)
  })

  it("untrusted: never runs the repository's node_modules/.bin, even when PATH points into the project", async () => {
    const { root, marker } = project()
    const PATH = pathWith(join(root, "node_modules", ".bin"), "node_modules/.bin", ".")
    const output = await afterWrite(root, { trusted: false, env: { ...SECRETS, PATH } })
    expect(existsSync(marker)).toBe(false)
    expect(output.output).toBe("Wrote a.ts.")
    expect(readFileSync(join(root, "a.ts"), "utf8")).toBe(UGLY)
  })

  it("untrusted: runs a prettier on the person's own PATH, or the one the bin option names, without secrets", async () => {
    const { root, marker } = project()
    const mine = binDir("prettier", `env > "${join(root, "mine-ran.txt")}"`)
    await afterWrite(root, { trusted: false, env: { ...SECRETS, PATH: pathWith(mine) } })
    expect(existsSync(marker)).toBe(false)
    const seen = readFileSync(join(root, "mine-ran.txt"), "utf8")
    for (const value of Object.values(SECRETS)) expect(seen).not.toContain(value)

    const named = binDir("prettier", `echo named > "${join(root, "named-ran.txt")}"`)
    await afterWrite(
      root,
      { trusted: false, env: { PATH: pathWith() } },
      { bin: { prettier: join(named, "prettier") } }
    )
    expect(readFileSync(join(root, "named-ran.txt"), "utf8")).toBe("named\n")
    expect(existsSync(marker)).toBe(false)
  })

  it("trusted: runs the project's node_modules/.bin through ctx.run, whose environment has no secret", async () => {
    const { root, marker } = project()
    await afterWrite(root, { trusted: true, env: { ...SECRETS, PATH: pathWith(), EDITOR: "vi" } })
    const seen = readFileSync(marker, "utf8")
    for (const value of Object.values(SECRETS)) expect(seen).not.toContain(value)
    expect(seen).toContain("EDITOR=vi")
  })
})
