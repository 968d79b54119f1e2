#!/usr/bin/env node
// Run by npm after installing the CLI (the package's `postinstall`): one offline `lathe run` turn, so the first run
// of the person who installed it starts from a V8 code cache instead of compiling the run build from its source.
//
// Without it the first `lathe run` after installing compiled dist/bundle/run/run.cjs from source and wrote its cache
// at exit: ~1.8x the first request of every run after it. The turn here runs in a temporary folder against a model
// answered by this script on 127.0.0.1 (one `read` call, then a text), with no provider key, no config of the
// person's and the catalogue refresh pointed at the same local server: nothing leaves the machine and nothing of the
// person's is read or written. The cache goes to `dist/bundle/run/code-cache/` beside the build it belongs to, where
// the CLI looks when the person's own cache folder has none (see `codeCacheDirs` in src/code-cache.ts); V8 checks it
// against the build and the Node that read it, so a later Node only ignores it.
//
// It never fails the install: anything that goes wrong (no bundle, as in a source checkout before the first build;
// an old Node; a timeout) ends it quietly with exit 0, and the CLI then writes its cache on the first run as before.
// `LATHE_NO_WARM=1` skips it. `node bin/warm-cache.js <path/to/lathe.js>` warms another build (the speed guard).
import { spawn, spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const TIMEOUT_MS = 30_000

const main = async () => {
  const [major, minor] = process.versions.node.split(".").map(Number)
  if (process.env.LATHE_NO_WARM === "1" || major < 22 || (major === 22 && minor < 13)) return
  const here = dirname(fileURLToPath(import.meta.url))
  const entry = process.argv[2] ? resolve(process.argv[2]) : join(here, "..", "dist", "bundle", "lathe.js")
  const runBuild = join(dirname(entry), "run", "run.cjs")
  if (!existsSync(entry) || !existsSync(runBuild)) return
  const cacheDir = join(dirname(runBuild), "code-cache")
  const work = mkdtempSync(join(tmpdir(), "lathe-warm-"))
  const server = await modelServer()
  try {
    const home = join(work, "home")
    const project = join(work, "project")
    mkdirSync(home)
    mkdirSync(project)
    writeFileSync(join(project, "hello.txt"), "hello\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "-c", "user.name=lathe", "-c", "user.email=lathe@localhost", "commit", "-qm", "warm-up")
    const url = `http://127.0.0.1:${server.address().port}`
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: home,
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_CACHE_HOME: join(home, "cache"),
      LATHE_DATA_DIR: join(home, "data"),
      NODE_COMPILE_CACHE: join(home, "node-compile-cache"),
      LATHE_CODE_CACHE: cacheDir,
      LATHE_BASE_URL: `${url}/v1`,
      LATHE_MODEL: "warm-up",
      LATHE_MODELS_URL: `${url}/api.json`,
      LATHE_NODE_HEAP: "default"
    }
    const child = spawn(process.execPath, [entry, "run", "--format", "json", "--yes", "Read hello.txt"], {
      cwd: project,
      env,
      stdio: "ignore"
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS)
    await new Promise((done) => child.on("close", done).on("error", done))
    clearTimeout(timer)
    // Readable by every user of a shared install (npm -g as root): bytecode of the build beside it, nothing secret.
    if (existsSync(cacheDir)) {
      chmodSync(cacheDir, 0o755)
      for (const name of readdirSync(cacheDir)) chmodSync(join(cacheDir, name), 0o644)
    }
  } finally {
    server.closeAllConnections()
    server.close()
    rmSync(work, { recursive: true, force: true })
  }
}

/** git in the temporary project, with no config but its own (no hooks or templates of the machine's run). */
const git = (cwd, ...args) =>
  spawnSync("git", args, {
    cwd,
    stdio: "ignore",
    env: { PATH: process.env.PATH ?? "", HOME: cwd, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }
  })

/** An OpenAI-compatible chat model on 127.0.0.1: a `read` of hello.txt, then "done" once the file came back. */
const modelServer = () =>
  new Promise((ready, fail) => {
    const server = createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => {
        body += chunk
      })
      request.on("end", () => {
        if (request.method !== "POST" || !request.url?.endsWith("/chat/completions")) {
          response.writeHead(404).end()
          return
        }
        const answered = body.includes('"role":"tool"')
        const delta = answered
          ? { role: "assistant", content: "done" }
          : {
              role: "assistant",
              tool_calls: [
                {
                  index: 0,
                  id: "call_warm",
                  type: "function",
                  function: { name: "read", arguments: JSON.stringify({ filePath: "hello.txt" }) }
                }
              ]
            }
        const chunk = (choice, extra = {}) =>
          `data: ${JSON.stringify({ id: "warm", object: "chat.completion.chunk", created: 0, model: "warm-up", choices: [choice], ...extra })}\n\n`
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.end(
          chunk({ index: 0, delta, finish_reason: null }) +
            chunk(
              { index: 0, delta: {}, finish_reason: answered ? "stop" : "tool_calls" },
              { usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }
            ) +
            "data: [DONE]\n\n"
        )
      })
    })
    // A machine where nothing may listen on loopback: no warm-up (the install goes on).
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => ready(server))
  })

// Nothing here may fail the install: an error anywhere (a stray event included) ends the warm-up, with exit 0.
process.on("uncaughtException", () => process.exit(0))
main().then(
  () => process.exit(0),
  () => process.exit(0)
)
