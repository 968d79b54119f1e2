/**
 * Benchmarks for @lathe/tools, reported as ratios against baselines measured in the same run:
 * - glob and grep through the tools vs the raw `rg` binary on a generated tree of 50,000 files (target ≤ 1.3×);
 * - edit on a 10,000-line file, exact and through the tolerant chain (target ≤ 20 ms), vs a plain
 *   read + String.replace + write of the same file.
 * - the sandbox's preparation of one bash call (protected paths, bwrap arguments) vs starting one process.
 * Run: npx tsx --conditions=@lathe/source bench/tools.ts [files]
 */
import { execFileSync, spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { AnyTool, ToolRunContext } from "@lathe/plugin"
import { createTools, prepareSandboxedRun, ToolState } from "@lathe/tools"
import { rgPath } from "@vscode/ripgrep"
import { Effect } from "effect"

const FILES = Number(process.argv[2] ?? 50_000)
const ROUNDS = 7

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

const time = async (fn: () => unknown): Promise<number> => {
  const samples: Array<number> = []
  await fn() // warm-up
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now()
    await fn()
    samples.push(performance.now() - start)
  }
  return median(samples)
}

const root = mkdtempSync(join(tmpdir(), "lathe-bench-tools-"))
try {
  const perDir = 100
  for (let d = 0; d < FILES / perDir; d++) {
    const dir = join(root, `pkg${d % 50}`, `mod${d}`)
    mkdirSync(dir, { recursive: true })
    for (let f = 0; f < perDir; f++) {
      const ext = f % 4 === 0 ? "ts" : f % 4 === 1 ? "js" : f % 4 === 2 ? "md" : "json"
      const body = `// file ${d}/${f}\nexport const value${f} = ${f}\n${f % 97 === 0 ? "const needle = true\n" : ""}`
      writeFileSync(join(dir, `file${f}.${ext}`), body)
    }
  }
  mkdirSync(join(root, "ignored"), { recursive: true })
  writeFileSync(join(root, "ignored", "skip.ts"), "const needle = 1\n")
  writeFileSync(join(root, ".gitignore"), "ignored/\n")
  execFileSync("git", ["init", "-q"], { cwd: root })

  const tools = createTools({ state: new ToolState() })
  const tool = (id: string): AnyTool => tools.find((t) => t.id === id) as AnyTool
  const ctx: ToolRunContext = {
    sessionID: "bench",
    messageID: "m",
    callID: "c",
    agent: "bench",
    directory: root,
    root,
    abort: new AbortController().signal,
    ask: async () => {},
    metadata: () => {}
  }
  const runTool = (id: string, args: unknown) => Effect.runPromise(tool(id).run(args, ctx))
  const rg = (args: ReadonlyArray<string>) =>
    spawnSync(rgPath, [...args], { cwd: root, maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "pipe"] })

  const results: Array<{ name: string; tool: number; baseline: number; target: string }> = []
  const globRaw = await time(() => rg(["--files", "--hidden", "--glob", "*.ts"]))
  const globTool = await time(() => runTool("glob", { pattern: "*.ts" }))
  results.push({ name: `glob *.ts (${FILES} files)`, tool: globTool, baseline: globRaw, target: "≤ 1.3×" })
  // The same work as the tool asks of rg (newest first), to separate the cost of the order from the tool's own.
  const globSorted = await time(() => rg(["--files", "--hidden", "--glob", "*.ts", "--sortr", "modified"]))
  results.push({ name: "glob vs rg --sortr modified", tool: globTool, baseline: globSorted, target: "info" })
  const grepRaw = await time(() => rg(["-nH", "--no-heading", "--hidden", "--regexp", "needle"]))
  const grepTool = await time(() => runTool("grep", { pattern: "needle" }))
  results.push({ name: `grep needle (${FILES} files)`, tool: grepTool, baseline: grepRaw, target: "≤ 1.3×" })

  const lines = Array.from({ length: 10_000 }, (_, i) =>
    i % 10 === 0 ? `function f${i}() {` : i % 10 === 9 ? "}" : `    const v${i} = compute(${i}, "x")`
  )
  const big = join(root, "big.ts")
  const content = `${lines.join("\n")}\n`
  const replaceRaw = await time(() => {
    writeFileSync(big, content)
    writeFileSync(big, readFileSync(big, "utf8").replace("const v5005 =", "const w5005 ="))
  })
  const editExact = await time(async () => {
    writeFileSync(big, content)
    await runTool("edit", { filePath: "big.ts", oldString: "const v5005 =", newString: "const w5005 =" })
  })
  const editTolerant = await time(async () => {
    writeFileSync(big, content)
    // Indented differently from the file: exact fails, the tolerant chain finds it.
    await runTool("edit", {
      filePath: "big.ts",
      oldString: 'const v5005 = compute(5005, "x")\n  const v5006 = compute(5006, "x")',
      newString: "const v5005 = 0\n  const v5006 = 0"
    })
  })
  results.push({ name: "edit exact, 10,000 lines", tool: editExact, baseline: replaceRaw, target: "≤ 20 ms" })
  results.push({ name: "edit tolerant, 10,000 lines", tool: editTolerant, baseline: replaceRaw, target: "≤ 20 ms" })

  // The sandbox's preparation per bash call (finding the protected paths of a git repository, building bwrap's
  // arguments) next to what it prepares for: starting one process.
  execFileSync("git", ["init", "-q"], { cwd: root })
  const bwrap = spawnSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).stdout.trim()
  if (bwrap !== "") {
    const choice = { state: "on" as const, kind: "bubblewrap" as const, program: bwrap }
    const place = { root, cwd: root, tempDir: mkdtempSync(join(tmpdir(), "lathe-bench-sbx-")), truncationDir: root }
    const prepare = await time(() => prepareSandboxedRun({ mode: "workspace-write" }, choice, place))
    const startProcess = await time(() => spawnSync("true"))
    results.push({
      name: "sandbox preparation, per call",
      tool: prepare,
      baseline: startProcess,
      target: "≤ 1× a process start"
    })
  }

  for (const r of results)
    process.stdout.write(
      `${r.name.padEnd(32)} tool ${r.tool.toFixed(1).padStart(7)} ms  baseline ${r.baseline.toFixed(1).padStart(7)} ms  ` +
        `ratio ${(r.tool / r.baseline).toFixed(2)}×  (target ${r.target})\n`
    )
} finally {
  rmSync(root, { recursive: true, force: true })
}
