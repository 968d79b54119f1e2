/**
 * "Walls, round three": with the sandbox off, the provider key is no longer one `cat /proc/$PPID/environ` away. The
 * published `lathe` command (bin/lathe, a POSIX sh launcher) hands the keys to Lathe on a descriptor and starts it
 * without them. End to end through the built bundle and a scripted model server: a model-run bash command reads the
 * start-up environment of Lathe and of Lathe's parent. Started the old way (`node bin/lathe.js`, the key in the
 * environment) the key is in what the command read and in what the model got back; started by bin/lathe it is in
 * neither, and the model server still receives it as the bearer token.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runProgram, sandbox } from "./helpers.js"

const bundle = fileURLToPath(new URL("../dist/bundle/lathe.js", import.meta.url))
const launcher = fileURLToPath(new URL("../bin/lathe", import.meta.url))
const startGuard = fileURLToPath(new URL("../bin/lathe.js", import.meta.url))
const NO_BUNDLE = `${bundle} is missing: build it with \`npx nx run @lathe/cli:bundle\``

/** The provider key; its name matches the launcher's `*_API_KEY`. */
const KEY_NAME = "LATHE_WALLS3_API_KEY"
/** A key with the characters a careless launcher would mangle: quotes, spaces, `$`, backquotes, backslashes. */
const KEY = `sk-walls3 "q" 'a' $HOME \`id\` \\n\\ 5f0c9a`
/** A second key the launcher hands over, holding a newline. */
const EXTRA_NAME = "LATHE_WALLS3_EXTRA_API_KEY"
const EXTRA = "extra-walls3\nsecond-line-7d21"
/** The key's line of an environment, as the payload hands it to the model past the masking of known secrets. */
const KEY_BASE64 = Buffer.from(`${KEY_NAME}=${KEY}\n`).toString("base64")

/**
 * The payload: the start-up environment of Lathe (the shell's parent) and of Lathe's parent, kept in a file and
 * printed for the model, and the key's line once more in base64 (Lathe masks a known secret in tool output by value;
 * an encoding walks past that); then whether the launcher's descriptor variable or the descriptor itself reached the
 * shell.
 */
const COMMAND = [
  `p=$PPID; for i in 1 2; do echo "== $p $(cat /proc/$p/comm)"; tr '\\0' '\\n' < /proc/$p/environ; echo;`,
  `p=$(ps -o ppid= -p $p | tr -d ' '); done > environ.txt; cat environ.txt;`,
  `echo "base64: $(grep -a '^${KEY_NAME}=' environ.txt | head -1 | base64 -w0)";`,
  `env | grep -c LATHE_KEYS_FD; [ -e /proc/$$/fd/3 ] && echo fd3-open || echo fd3-closed`
].join(" ")

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

/** Runs `command args` with exactly `env`, collecting its output. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) =>
  runProgram(command, args, { cwd, env, timeoutMs: 60_000 })

/**
 * A person's config with the sandbox off and an OpenAI-compatible provider (the scripted server) whose key comes
 * from {@link KEY_NAME}; the model runs {@link COMMAND} once, then answers.
 */
const setup = async () => {
  let chatsSeen = 0
  const server = await startScriptedServer((request) => {
    if (JSON.stringify(request.body).includes("Write a title")) return { steps: [{ text: "A title" }] }
    chatsSeen += 1
    if (chatsSeen === 1)
      return { steps: [{ tool: "bash", input: { command: COMMAND, description: "read environments" } }] }
    return { steps: [{ text: "Read them." }] }
  })
  servers.push(server)
  const box = sandbox()
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(
    join(box.dir, "config", "lathe", "lathe.json"),
    JSON.stringify({
      model: "keyed/m",
      sandbox: "off",
      provider: {
        keyed: { type: "openai-compatible", baseURL: server.url, apiKey: `{env:${KEY_NAME}}`, models: { m: {} } }
      }
    })
  )
  const env: Record<string, string> = {
    ...box.env,
    // The Node running these tests first on PATH: the launcher runs `node` from PATH.
    PATH: [dirname(process.execPath), box.env.PATH].join(delimiter),
    [KEY_NAME]: KEY,
    // Another key, with a newline in it: handed over as well (the launcher escapes it).
    [EXTRA_NAME]: EXTRA
  }
  return { server, project: box.project, env }
}

/** The chat requests (not the title) the server received. */
const chats = (server: ScriptedServer) =>
  server.requests.filter((request) => !JSON.stringify(request.body).includes("Write a title"))

describe("walls: with the sandbox off, no provider key in Lathe's start-up environment (end to end)", () => {
  it("started as `node bin/lathe.js` (the key in its environment), a bash command reads the key from /proc/$PPID/environ", async (ctx) => {
    ctx.skip(!existsSync(bundle), NO_BUNDLE)
    const { server, project, env } = await setup()
    const result = await run(process.execPath, [startGuard, "run", "--yes", "read them"], project, env)
    assert.strictEqual(result.code, 0, result.stderr)
    const read = readFileSync(join(project, "environ.txt"), "utf8")
    assert.include(read, `${KEY_NAME}=${KEY}`, "Lathe's /proc entry holds the key")
    assert.include(read, `${EXTRA_NAME}=${EXTRA}`)
    // The tool's output went back to the model with the key in it: masked where it is written as is, whole in base64.
    const afterTool = chats(server).map((request) => JSON.stringify(request.body))
    assert.isTrue(
      afterTool.some((body) => body.includes(`base64: ${KEY_BASE64}`)),
      afterTool.map((body) => body.slice(body.indexOf('"role":"tool"'))).join("\n")
    )
  }, 90_000)

  it("started by bin/lathe, neither Lathe's nor its parent's /proc entry holds the key; the provider still gets it", async (ctx) => {
    ctx.skip(!existsSync(bundle), NO_BUNDLE)
    const { server, project, env } = await setup()
    const result = await run(launcher, ["run", "--yes", "read them"], project, env)
    assert.strictEqual(result.code, 0, result.stderr)
    const read = readFileSync(join(project, "environ.txt"), "utf8")
    // Both start-up environments were read (Lathe's has its HOME; the parent is this test's process).
    assert.strictEqual(read.match(/^== \d+ /gm)?.length, 2, read)
    assert.include(read, `HOME=${env.HOME}`)
    assert.notInclude(read, KEY)
    assert.notInclude(read, "sk-walls3")
    assert.notInclude(read, "extra-walls3")
    assert.notInclude(read, "second-line-7d21")
    const bodies = chats(server).map((request) => JSON.stringify(request.body))
    const afterTool = bodies.find((body) => body.includes("environ.txt") && body.includes("fd3-"))
    assert.isDefined(afterTool, bodies.join("\n"))
    assert.include(afterTool, "base64: \\n") // the key's line was not found
    for (const body of bodies) {
      assert.notInclude(body, "sk-walls3")
      assert.notInclude(body, KEY_BASE64)
    }
    // The descriptor and its variable stayed with Lathe: the command inherited neither.
    assert.match(afterTool ?? "", /\\n0\\nfd3-closed/)
    // The provider works: every request carried the key, intact, as the bearer token.
    assert.isAtLeast(server.requests.length, 2)
    for (const request of server.requests) assert.strictEqual(request.headers.authorization, `Bearer ${KEY}`)
  }, 90_000)
})
