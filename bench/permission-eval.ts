/**
 * Permission evaluation speed: evaluations per second of `evaluate` over a 200-rule ruleset (target ≥ 1M/s),
 * as a ratio against a baseline measured in the same run: a plain `===` loop over the same rules (last match
 * wins, no wildcards), the least work any evaluator can do.
 *
 *   npx tsx --conditions=@lathe/source bench/permission-eval.ts
 */

import { evaluate, type PermissionAction, type Rule } from "@lathe/plugin"

const actions: ReadonlyArray<PermissionAction> = ["allow", "deny", "ask"]
const tools = ["git", "npm", "cargo", "docker", "kubectl", "make", "rm", "curl", "python", "node"]
const subs = ["push", "pull", "status", "run", "build", "test", "exec", "apply", "log", "diff"]

// 200 rules: bash prefixes, literals and `?`/middle wildcards; read/edit paths; a few other permissions.
const ruleset: Array<Rule> = [{ permission: "*", pattern: "*", action: "allow" }]
for (let i = 0; ruleset.length < 200; i++) {
  const tool = tools[i % tools.length] as string
  const sub = subs[(i * 7) % subs.length] as string
  const action = actions[i % 3] as PermissionAction
  const kind = i % 8
  if (kind < 3) ruleset.push({ permission: "bash", pattern: `${tool} ${sub} *`, action })
  else if (kind === 3) ruleset.push({ permission: "bash", pattern: `${tool} ${sub} --flag-${i}`, action })
  else if (kind === 4) ruleset.push({ permission: "bash", pattern: `${tool} * --dry-run-${i}`, action })
  else if (kind === 5) ruleset.push({ permission: "read", pattern: `*.secret${i}`, action })
  else if (kind === 6) ruleset.push({ permission: "edit", pattern: `src/module${i}/*`, action })
  else ruleset.push({ permission: `mcp_tool${i}`, pattern: "*", action })
}

const queries: Array<readonly [string, string]> = []
for (let i = 0; i < 1024; i++) {
  const tool = tools[(i * 3) % tools.length] as string
  const sub = subs[(i * 5) % subs.length] as string
  const kind = i % 4
  if (kind < 2) queries.push(["bash", `${tool} ${sub} origin branch-${i}`])
  else if (kind === 2) queries.push(["read", `/repo/src/module${i % 50}/file${i}.ts`])
  else queries.push(["edit", `src/module${i % 60}/deep/file${i}.ts`])
}

const baseline = (permission: string, pattern: string): PermissionAction => {
  for (let i = ruleset.length - 1; i >= 0; i--) {
    const rule = ruleset[i] as Rule
    if ((rule.permission === permission || rule.permission === "*") && rule.pattern === pattern) return rule.action
  }
  return "ask"
}

const measure = (name: string, fn: (permission: string, pattern: string) => PermissionAction, iterations: number) => {
  let sink = 0
  for (let i = 0; i < 20_000; i++) {
    const [permission, pattern] = queries[i & 1023] as readonly [string, string]
    sink += fn(permission, pattern).length // warm-up
  }
  const start = performance.now()
  for (let i = 0; i < iterations; i++) {
    const [permission, pattern] = queries[i & 1023] as readonly [string, string]
    sink += fn(permission, pattern).length
  }
  const seconds = (performance.now() - start) / 1000
  return { name, perSecond: iterations / seconds, sink }
}

const iterations = 2_000_000
const base = measure("=== loop (baseline)", baseline, iterations)
const ours = measure("evaluate", (permission, pattern) => evaluate(permission, pattern, ruleset).action, iterations)
const format = (n: number) => `${(n / 1e6).toFixed(2)}M/s`
process.stdout.write(
  [
    `rules: ${ruleset.length}, distinct queries: ${queries.length}, iterations: ${iterations}`,
    `${base.name.padEnd(22)} ${format(base.perSecond)}`,
    `${ours.name.padEnd(22)} ${format(ours.perSecond)}  (${(ours.perSecond / base.perSecond).toFixed(2)}× the baseline)`,
    `target ≥ 1M/s: ${ours.perSecond >= 1e6 ? "met" : "NOT met"}`,
    ""
  ].join("\n")
)
