#!/usr/bin/env node
// Usage: node scripts/summarize-tests.mjs <log of `nx run-many ... --output-style=static`>
// Prints the totals of every vitest run in the log as one line: `N passed, N failed, N skipped`.
//
// It reads vitest 5's closing summary of each run (`Tests  1 failed | 2 passed | 1 skipped | 1 todo (5)` and
// `Test Files  1 failed | 1 passed (2)`), colours stripped. Nx replays a cached task's output, so cached test
// runs are counted too. A test file that fails before any test runs (an import error) counts as one failure,
// and so does a failed `:test` task that printed no summary at all (a crashed worker, a bad config).
import { readFileSync } from "node:fs"

// biome-ignore lint/suspicious/noControlCharactersInRegex: matches ANSI colour codes on purpose
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g
const lines = readFileSync(process.argv[2] ?? 0, "utf8")
  .replace(ANSI, "")
  .split(/\r?\n/)

/** `1 failed | 2 passed | 1 skipped | 1 todo (5)` → { failed: 1, passed: 2, skipped: 1, todo: 1 } */
const counts = (text) => {
  const out = {}
  for (const [, n, word] of text.matchAll(/(\d+) ([a-z]+)/g)) out[word] = (out[word] ?? 0) + Number(n)
  return out
}

const total = { passed: 0, failed: 0, skipped: 0 }
const sections = [] // one per `> nx run <project>:<target>` header, in order
let current = null
for (const line of lines) {
  const header = line.match(/^> nx run (\S+)/)
  if (header) {
    current = { task: header[1], summarized: false, failed: 0 }
    sections.push(current)
    continue
  }
  const tests = line.match(/^\s*Tests\s+(.*\(\d+\))\s*$/)
  const files = line.match(/^\s*Test Files\s+(.*\(\d+\))\s*$/)
  if (!tests && !files) continue
  const c = counts((tests ?? files)[1])
  if (current) current.summarized = true
  if (files) {
    // An import error fails a file without failing a test; count such a file once.
    if (current) current.filesFailed = c.failed ?? 0
    continue
  }
  total.passed += c.passed ?? 0
  total.skipped += (c.skipped ?? 0) + (c.todo ?? 0)
  total.failed += c.failed ?? 0
  if (current) current.failed += c.failed ?? 0
}
for (const s of sections) {
  if ((s.filesFailed ?? 0) > s.failed) total.failed += s.filesFailed - s.failed
}

// Nx closes a failed run with "Failed tasks:" and one "- project:target" line per task.
const failedTasks = new Set()
const at = lines.findLastIndex((l) => /^\s*Failed tasks:/.test(l))
if (at >= 0) {
  for (const l of lines.slice(at + 1)) {
    const m = l.match(/^\s*- (\S+)/)
    if (m) failedTasks.add(m[1])
    else if (l.trim() !== "") break
  }
}
for (const task of failedTasks) {
  if (!task.endsWith(":test")) continue
  const s = sections.findLast((x) => x.task === task)
  if (!s?.summarized || (s.failed === 0 && (s.filesFailed ?? 0) === 0)) total.failed += 1
}

console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`)
