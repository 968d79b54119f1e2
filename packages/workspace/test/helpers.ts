import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, type Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll } from "vitest"

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A fresh temp dir (real path), removed when the file's tests end. */
export const tempDir = (prefix = "lathe-ws-"): string => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  dirs.push(dir)
  return dir
}

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_NOSYSTEM: "1"
}

/** Runs git in `cwd` and returns its trimmed stdout. */
export const sh = (cwd: string, ...args: Array<string>): string =>
  execFileSync("git", args, { cwd, env: gitEnv, stdio: ["ignore", "pipe", "pipe"] })
    .toString("utf8")
    .trim()

/** Writes a file (creating folders). */
export const put = (root: string, path: string, content: string | Uint8Array): void => {
  mkdirSync(dirname(join(root, path)), { recursive: true })
  writeFileSync(join(root, path), content)
}

/** A binary blob git will treat as binary (NUL bytes, every byte value). */
export const binary = (seed: number): Uint8Array => Uint8Array.from({ length: 600 }, (_, i) => (i * seed + seed) % 256)

/** The commits of the source repo that tests name. */
export interface SourceRepo {
  readonly path: string
  /** main's first commit (also tagged `v1`). */
  readonly first: string
  /** main's head. */
  readonly main: string
  /** the head of branch `feature`. */
  readonly feature: string
}

/**
 * A local repository with history: main (2 commits, tag v1 on the first), branch feature (1 more commit). Files:
 * README.md, src/a.ts, src/b.ts, logo.bin (binary), .gitignore (ignores *.log and build/).
 */
export const sourceRepo = (): SourceRepo => {
  const path = join(tempDir("lathe-ws-src-"), "origin")
  mkdirSync(path)
  sh(path, "init", "-q", "-b", "main")
  put(path, "README.md", "# demo\n")
  put(path, "src/a.ts", "export const a = 1\n")
  put(path, "src/b.ts", "export const b = 2\n")
  put(path, "logo.bin", binary(7))
  put(path, ".gitignore", "*.log\nbuild/\n")
  sh(path, "add", "-A")
  sh(path, "commit", "-q", "-m", "first")
  const first = sh(path, "rev-parse", "HEAD")
  sh(path, "tag", "v1")
  put(path, "src/a.ts", "export const a = 10\n")
  sh(path, "commit", "-q", "-am", "second")
  const main = sh(path, "rev-parse", "HEAD")
  sh(path, "checkout", "-q", "-b", "feature")
  put(path, "feature.txt", "feature work\n")
  sh(path, "add", "-A")
  sh(path, "commit", "-q", "-m", "feature")
  const feature = sh(path, "rev-parse", "HEAD")
  sh(path, "checkout", "-q", "main")
  return { path, first, main, feature }
}

/** Every file under `dir` except `.git`, with its bytes (hex), sorted by path. */
export const tree = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = join(at, entry.name)
      if (entry.name === ".git" && at === dir) continue
      if (entry.isDirectory()) walk(full)
      else out[relative(dir, full)] = readFileSync(full).toString("hex")
    }
  }
  walk(dir)
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)))
}

/** The test Postgres server's URL (from the vitest globalSetup `scripts/test-postgres.mjs`). */
export const pgUrl = (): string => {
  const url = process.env.LATHE_TEST_PG_URL
  if (!url)
    throw new Error("LATHE_TEST_PG_URL is not set: run these tests through vitest (its globalSetup starts Postgres).")
  return url
}

/** Creates a database of its own for one test file and returns a `SqlClient` layer on it. */
export const freshDatabase = async (
  name: string
): Promise<{ url: string; layer: Layer.Layer<SqlClient.SqlClient, unknown> }> => {
  const database = `${name}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  await Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`create database "${database}"`)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(pgUrl()) })))
  )
  const url = pgUrl().replace(/\/[^/]*$/, `/${database}`)
  return { url, layer: PgClient.layer({ url: Redacted.make(url) }) }
}
