import { existsSync, readdirSync, readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { WorkspaceLog } from "../src/workspace-log.js"
import { MemoryWorkspaceLog } from "../src/workspace-log-memory.js"
import { Workspaces } from "../src/workspaces.js"
import { sh, sourceRepo, tempDir } from "./helpers.js"

const src = sourceRepo()
const runner = (root = tempDir("lathe-ws-runner-"), log: Layer.Layer<WorkspaceLog> = MemoryWorkspaceLog.layer()) =>
  Workspaces.layer({ root }).pipe(Layer.provideMerge(log))

describe("Workspaces.open clones a repository at a ref", () => {
  it.effect("the remote's HEAD when no ref is given, recorded as the base", () =>
    Effect.gen(function* () {
      const dir = yield* (yield* Workspaces).open("ses_head", { repo: src.path })
      assert.strictEqual(sh(dir, "rev-parse", "HEAD"), src.main)
      assert.strictEqual(readFileSync(join(dir, "src/a.ts"), "utf8"), "export const a = 10\n")
      const entry = yield* (yield* WorkspaceLog).latest("ses_head")
      assert.deepStrictEqual(
        { base: entry?.base, ref: entry?.ref, repo: entry?.repo },
        {
          base: src.main,
          ref: undefined,
          repo: src.path
        }
      )
    }).pipe(Effect.provide(runner()))
  )

  it.effect("a branch, a tag and a commit", () =>
    Effect.gen(function* () {
      const ws = yield* Workspaces
      const branch = yield* ws.open("ses_branch", { repo: src.path, ref: "feature" })
      assert.strictEqual(sh(branch, "rev-parse", "HEAD"), src.feature)
      assert.isTrue(existsSync(join(branch, "feature.txt")))
      const tag = yield* ws.open("ses_tag", { repo: src.path, ref: "v1" })
      assert.strictEqual(sh(tag, "rev-parse", "HEAD"), src.first)
      const commit = yield* ws.open("ses_commit", { repo: `file://${src.path}`, ref: src.first })
      assert.strictEqual(sh(commit, "rev-parse", "HEAD"), src.first)
      assert.strictEqual(readFileSync(join(commit, "src/a.ts"), "utf8"), "export const a = 1\n")
    }).pipe(Effect.provide(runner()))
  )

  it.effect("an unknown ref names the ref and the repo, and leaves no directory", () => {
    const root = tempDir()
    return Effect.gen(function* () {
      const error = yield* Effect.flip((yield* Workspaces).open("ses_noref", { repo: src.path, ref: "no-such-branch" }))
      assert.strictEqual(error._tag, "WorkspaceRefNotFound")
      assert.include(error.message, '"no-such-branch"')
      assert.include(error.message, src.path)
      assert.deepStrictEqual(readdirSync(root), [])
      assert.strictEqual(yield* (yield* WorkspaceLog).latest("ses_noref"), undefined)
    }).pipe(Effect.provide(runner(root)))
  })

  it.effect("a bad URL fails with a clone error and leaves no directory", () => {
    const root = tempDir()
    return Effect.gen(function* () {
      const error = yield* Effect.flip((yield* Workspaces).open("ses_bad", { repo: join(root, "missing-repo") }))
      assert.strictEqual(error._tag, "WorkspaceCloneError")
      assert.include(error.message, "Could not clone")
      assert.include(error.message, "missing-repo")
      assert.deepStrictEqual(readdirSync(root), [])
    }).pipe(Effect.provide(runner(root)))
  })

  it.effect("refs and URLs that git could read as options, and command transports, are refused before git runs", () =>
    Effect.gen(function* () {
      const ws = yield* Workspaces
      const ref = yield* Effect.flip(ws.open("ses_dash", { repo: src.path, ref: "--upload-pack=touch /tmp/pwned" }))
      assert.strictEqual(ref._tag, "WorkspaceInvalid")
      assert.include(ref.message, 'starts with "-"')
      const url = yield* Effect.flip(ws.open("ses_dash2", { repo: "--upload-pack=touch /tmp/pwned" }))
      assert.strictEqual(url._tag, "WorkspaceInvalid")
      const ext = yield* Effect.flip(ws.open("ses_ext", { repo: "ext::sh -c touch% /tmp/pwned" }))
      assert.strictEqual(ext._tag, "WorkspaceInvalid")
      assert.include(ext.message, "remote-helper")
      const fd = yield* Effect.flip(ws.open("ses_fd", { repo: "fd::17" }))
      assert.strictEqual(fd._tag, "WorkspaceInvalid")
      const badID = yield* Effect.flip(ws.open("../escape", { repo: src.path }))
      assert.strictEqual(badID._tag, "WorkspaceInvalid")
    }).pipe(Effect.provide(runner()))
  )

  it.live("a private repository fails at once with a clear message, and the URL's secret is never shown", () => {
    let server: Server | undefined
    return Effect.gen(function* () {
      const port = yield* Effect.promise(
        () =>
          new Promise<number>((resolve) => {
            server = createServer((_req, res) => {
              res.writeHead(401, { "WWW-Authenticate": 'Basic realm="private"' })
              res.end()
            })
            server.listen(0, "127.0.0.1", () => {
              const address = server?.address()
              resolve(typeof address === "object" && address ? address.port : 0)
            })
          })
      )
      const started = Date.now()
      const error = yield* Effect.flip(
        (yield* Workspaces).open("ses_private", { repo: `http://bob:s3cret-token@127.0.0.1:${port}/private.git` })
      )
      assert.isBelow(Date.now() - started, 10_000)
      assert.strictEqual(error._tag, "WorkspaceCloneError")
      assert.include(error.message, "needs credentials")
      assert.notInclude(error.message, "s3cret-token")
      assert.notInclude(JSON.stringify(error), "s3cret-token")
    }).pipe(Effect.provide(runner()), Effect.ensuring(Effect.sync(() => server?.close())))
  })

  it.effect("a second open with another ref is a conflict; without a spec it continues the session", () =>
    Effect.gen(function* () {
      const ws = yield* Workspaces
      const dir = yield* ws.open("ses_again", { repo: src.path, ref: "v1" })
      const error = yield* Effect.flip(ws.open("ses_again", { repo: src.path, ref: "feature" }))
      assert.strictEqual(error._tag, "WorkspaceConflict")
      assert.strictEqual(yield* ws.open("ses_again"), dir)
      const missing = yield* Effect.flip(ws.open("ses_never"))
      assert.strictEqual(missing._tag, "WorkspaceNotFound")
    }).pipe(Effect.provide(runner()))
  )
})
