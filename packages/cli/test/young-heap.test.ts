import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "vitest"

// The bundled CLI (what the published `lathe` and the single executable run); Nx builds it before this package's tests.
const bundle = fileURLToPath(new URL("../dist/bundle/lathe.js", import.meta.url))
const MIB = 1024 * 1024

/**
 * Preloaded into the launcher's process: at exit (after `lathe --version` ran, so after start-up), it keeps some
 * 40 MiB of small objects alive (survivors make V8 grow its young generation) and reports the largest size the
 * young generation reached.
 */
const PROBE = `
import v8 from "node:v8"
const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size
process.on("exit", () => {
  let largest = newSpace()
  const kept = []
  for (let i = 0; i < 400000; i++) {
    kept.push({ i, text: "survivor " + i })
    if (i % 1000 === 0) largest = Math.max(largest, newSpace())
  }
  process.stderr.write("young-heap-probe " + JSON.stringify({ largest: Math.max(largest, newSpace()), kept: kept.length }) + "\\n")
})
`

/** Runs `node [nodeArgs] lathe.js --version` with the probe and returns the largest young generation, in bytes. */
const largestYoungHeap = (env: Record<string, string>, nodeArgs: ReadonlyArray<string> = []) =>
  new Promise<number>((resolve, reject) => {
    const probe = `data:text/javascript,${encodeURIComponent(PROBE)}`
    const child = spawn(process.execPath, [...nodeArgs, "--import", probe, bundle, "--version"], {
      cwd: tmpdir(),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    child.on("error", reject)
    child.on("close", (code) => {
      const line = /young-heap-probe (.*)/.exec(stderr)?.[1]
      if (code !== 0 || line === undefined) reject(new Error(`lathe --version exited with ${code}:\n${stderr}`))
      else resolve((JSON.parse(line) as { largest: number }).largest)
    })
  })

describe("the young generation's cap in the bundled launcher", () => {
  it("holds the young generation at or under 16 MiB once started, with LATHE_NODE_HEAP=small", async () => {
    assert.isTrue(existsSync(bundle), `${bundle} is missing: run npx nx run @lathe/cli:bundle`)
    // `--version` loads so little that start-up may never grow it to the cap; the survivors the probe keeps would
    // (the next test), so staying at or under the cap is the cap holding.
    assert.isAtMost(await largestYoungHeap({ LATHE_NODE_HEAP: "small" }), 16 * MIB)
  })

  it("is off by default: the same load grows V8's default young generation past the cap", async () => {
    assert.isAbove(await largestYoungHeap({}), 16 * MIB)
  })

  it("leaves a young generation the person sized themselves alone, on the command line or in NODE_OPTIONS", async () => {
    // 32 MiB semi-spaces: a young generation of up to 64 MiB, which the cap would have stopped at 16.
    assert.isAbove(await largestYoungHeap({ LATHE_NODE_HEAP: "small" }, ["--max-semi-space-size=32"]), 16 * MIB)
    assert.isAbove(
      await largestYoungHeap({ LATHE_NODE_HEAP: "small", NODE_OPTIONS: "--max-semi-space-size=32" }),
      16 * MIB
    )
  })
})
