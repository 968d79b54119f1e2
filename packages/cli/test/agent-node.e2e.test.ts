/**
 * "Correct where real use goes, again": the agent's shell gets the person's environment. `./lathe` runs Lathe on its
 * private Node by that Node's full path and leaves PATH as the person had it, so a `node` earlier on the person's
 * PATH than Lathe's runtime is the one the agent's commands run; `lathe doctor` names it.
 */
import { spawnSync } from "node:child_process"
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const FAKE_VERSION = "v18.0.0-fake"

const write = (file: string, content: string, mode?: number) => {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, content)
  if (mode !== undefined) chmodSync(file, mode)
}

/** A folder holding a `node` that only prints {@link FAKE_VERSION}: the person's own (older) Node. */
const fakeNodeDir = (parent: string) => {
  const dir = join(parent, "user-bin")
  write(join(dir, "node"), `#!/bin/sh\necho ${FAKE_VERSION}\n`, 0o755)
  return dir
}

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

describe("the ./lathe launcher leaves the person's PATH to Lathe's commands", () => {
  it("runs Lathe on its own Node by full path; a child's `node -v` is the person's, and keys still go on fd 3", () => {
    // A checkout-shaped folder with the real launcher and stamp scripts; npm and the build are stand-ins. The
    // stand-in bundle does what any command Lathe starts does: inherits Lathe's environment and runs `node -v`.
    const root = mkdtempSync(join(tmpdir(), "lathe-agent-node-"))
    for (const file of ["lathe", "scripts/setup-stamps.sh", "scripts/use-node.sh", ".nvmrc"]) {
      mkdirSync(dirname(join(root, file)), { recursive: true })
      copyFileSync(join(repo, file), join(root, file))
    }
    write(join(root, "package.json"), '{ "name": "lathe", "workspaces": ["packages/*"] }\n')
    write(join(root, "package-lock.json"), '{ "name": "lathe", "lockfileVersion": 3, "packages": {} }\n')
    write(join(root, "nx.json"), "{}\n")
    write(join(root, "packages/cli/package.json"), '{ "name": "@lathe/cli" }\n')
    const child = `import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
const fd = Number(process.env.LATHE_KEYS_FD)
console.log(JSON.stringify({
  execPath: process.execPath,
  shellNode: execFileSync("sh", ["-c", "node -v"], { encoding: "utf8" }).trim(),
  keys: Number.isInteger(fd) ? readFileSync(fd, "utf8") : "",
  inEnv: process.env.AGENT_NODE_API_KEY ?? null
}))
`
    write(
      join(root, "packages/cli/scripts/bundle.mjs"),
      `import { mkdirSync, writeFileSync } from "node:fs"
mkdirSync(new URL("../dist/bundle/", import.meta.url), { recursive: true })
writeFileSync(new URL("../dist/bundle/lathe.js", import.meta.url), ${JSON.stringify(child)})
`
    )
    write(join(root, "fake-bin", "npm"), "#!/usr/bin/env bash\nmkdir -p node_modules\n", 0o755)
    const lathesNode = dirname(process.execPath)
    const base = { HOME: join(root, "home"), TMPDIR: tmpdir() }
    // Setup, with the Node running these tests as the one that installs (it becomes Lathe's runtime).
    const setup = spawnSync(join(root, "lathe"), [], {
      cwd: tmpdir(),
      env: { ...base, PATH: [join(root, "fake-bin"), lathesNode, "/usr/bin", "/bin"].join(delimiter) },
      encoding: "utf8"
    })
    assert.strictEqual(setup.status, 0, setup.stderr)
    // The person's PATH: their own `node` first, Lathe's runtime later.
    const userBin = fakeNodeDir(root)
    const run = spawnSync(join(root, "lathe"), [], {
      cwd: tmpdir(),
      env: {
        ...base,
        PATH: [userBin, join(root, "fake-bin"), lathesNode, "/usr/bin", "/bin"].join(delimiter),
        AGENT_NODE_API_KEY: "sk-agent-node"
      },
      encoding: "utf8"
    })
    assert.strictEqual(run.status, 0, run.stderr)
    const seen = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>
    assert.strictEqual(seen.shellNode, FAKE_VERSION, "a command Lathe starts runs the person's node")
    assert.strictEqual(seen.execPath, process.execPath, "Lathe itself runs on its own Node, by full path")
    assert.include(String(seen.keys).split("\n"), "AGENT_NODE_API_KEY=sk-agent-node", "keys still arrive on fd 3")
    assert.isNull(seen.inEnv, "and not in the environment")
  }, 60_000)
})

describe("the agent's shell runs the person's node (real CLI, scripted model)", () => {
  it("with a fake node earlier on PATH than Lathe's runtime, bash's `node -v` prints the fake's version; doctor names it", async () => {
    const server = await startScriptedServer((request) => {
      const body = JSON.stringify(request.body)
      if (body.includes("Write a title")) return { steps: [{ text: "A title" }] }
      if (body.includes('"role":"tool"')) return { steps: [{ text: "Checked." }] }
      return { steps: [{ tool: "bash", input: { command: "node -v", description: "Which node" } }] }
    })
    servers.push(server)
    const box = sandbox()
    write(
      join(box.dir, "config", "lathe", "lathe.json"),
      JSON.stringify({ model: "local/m", provider: { local: { type: "openai-compatible", baseURL: server.url } } })
    )
    // Lathe's runtime (the Node running these tests, which runs the CLI by full path) is on PATH too, after the fake.
    const env = { ...box.env, PATH: [fakeNodeDir(box.dir), dirname(process.execPath), box.env.PATH].join(delimiter) }
    const result = await runLathe(["run", "--yes", "--format", "json", "which node?"], {
      cwd: box.project,
      env,
      timeoutMs: 60_000
    })
    assert.strictEqual(result.code, 0, result.stderr)
    const output = result.events.flatMap((event) =>
      event.type === "tool.completed" && "output" in event ? [String(event.output)] : []
    )
    const answered = server.requests.map((request) => JSON.stringify(request.body)).join("\n")
    assert.include(answered, FAKE_VERSION, `the model got the fake's version back; tool outputs: ${output.join(" | ")}`)
    assert.notInclude(answered, process.version)

    const doctor = await runLathe(["doctor"], { cwd: box.project, env, timeoutMs: 60_000 })
    const line = doctor.stdout.split("\n").find((text) => text.includes(" shell "))
    assert.include(line, `run node ${FAKE_VERSION} (${join(box.dir, "user-bin", "node")}, first on your PATH)`)
    assert.include(line, `Lathe itself runs on ${process.version}`)
  }, 120_000)
})
