/**
 * @lathe/lsp/testing: the real language servers for tests and benchmarks (typescript-language-server with TypeScript
 * 6, and pyright), installed once from the npm registry into a cache folder in the OS temp dir that every test file
 * (and every parallel worker) shares: the first to arrive installs, the others wait for its marker.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Bump when the packages change, so an old cache is not used. */
const CACHE = join(tmpdir(), "lathe-lsp-test-servers-v1")
const PACKAGES = ["typescript-language-server@6", "typescript@6", "pyright@1"]

/** Where the servers' programs are (put it on PATH), or why they could not be installed. */
export type TestServers = { readonly bin: string } | { readonly skip: string }

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

export const installTestServers = (): TestServers => {
  const bin = join(CACHE, "node_modules", ".bin")
  const done = join(CACHE, "installed")
  const lock = `${CACHE}.lock`
  while (!existsSync(done)) {
    try {
      mkdirSync(lock)
    } catch {
      // Another worker installs: wait for it (a lock older than five minutes is a dead worker's).
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
      if (age > 300_000) rmSync(lock, { recursive: true, force: true })
      sleep(500)
      continue
    }
    try {
      mkdirSync(CACHE, { recursive: true })
      writeFileSync(join(CACHE, "package.json"), '{ "name": "lathe-lsp-test-servers", "private": true }\n')
      const npm = spawnSync(
        "npm",
        ["install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error", ...PACKAGES],
        { cwd: CACHE, encoding: "utf8", timeout: 240_000 }
      )
      if (npm.status !== 0)
        return {
          skip: `the npm registry could not be reached to install ${PACKAGES.join(", ")}: ${npm.stderr.slice(-300)}`
        }
      writeFileSync(done, "")
    } finally {
      rmSync(lock, { recursive: true, force: true })
    }
  }
  return { bin }
}
