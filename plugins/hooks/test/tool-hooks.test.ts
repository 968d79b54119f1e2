import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { chunks, Plugins, testLayer } from "@lathe/core/testing"
import { Effect } from "effect"
import { createHooksPlugin } from "../src/index.js"
import { hookLoop, on, readJson, runTurn, script, tempDir } from "./helpers.js"

const usage = { input: 1, output: 1 }
/** One step calling bash with each command, then a step that answers. */
const bashSteps = (...commands: ReadonlyArray<string>) => [
  [
    ...commands.map((command, index) => chunks.toolCall(`call_${index + 1}`, "bash", { command, description: "run" })),
    chunks.finish(usage, "tool-calls")
  ],
  [chunks.text("done"), chunks.finish(usage)]
]

/** The processes (not zombies) whose process group is `pgid`, from /proc. */
const liveInGroup = (pgid: number): Array<number> =>
  readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
        return fields[0] !== "Z" && Number(fields[2]) === pgid ? [Number(pid)] : []
      } catch {
        return []
      }
    })

describe("PreToolUse", () => {
  it.live("a hook exiting 2 blocks a bash call, and the model reads its stderr", () => {
    // Without Lathe, the command does its damage.
    const bare = tempDir()
    mkdirSync(join(bare, "victim"))
    execFileSync("bash", ["-c", "rm -rf victim"], { cwd: bare })
    assert.isFalse(existsSync(join(bare, "victim")))

    const hooks = tempDir()
    const guard = script(
      hooks,
      "guard.sh",
      [
        "input=$(cat)",
        `printf '%s' "$input" > "${hooks}/input.json"`,
        `printf '%s' "$CLAUDE_PROJECT_DIR|$LATHE_PROJECT_DIR" > "${hooks}/project-dir"`,
        `if printf '%s' "$input" | grep -q 'rm -rf'; then`,
        '  echo "rm -rf is not allowed here: delete the files one by one." >&2',
        "  exit 2",
        "fi"
      ].join("\n")
    )
    const t = hookLoop({ steps: bashSteps("rm -rf victim"), personal: { hooks: { PreToolUse: on("Bash", guard) } } })
    mkdirSync(join(t.root, "victim"))
    return Effect.gen(function* () {
      const turn = yield* runTurn("clean up")
      assert.isTrue(existsSync(join(t.root, "victim")))
      assert.lengthOf(turn.requests, 2)
      assert.include(turn.requests[1], "rm -rf is not allowed here: delete the files one by one.")
      assert.deepStrictEqual(readJson(join(hooks, "input.json")), {
        cwd: t.root,
        hook_event_name: "PreToolUse",
        session_id: turn.sessionID,
        tool_name: "Bash",
        tool_input: { command: "rm -rf victim", description: "run" },
        tool_use_id: "call_1"
      })
      assert.strictEqual(readFileSync(join(hooks, "project-dir"), "utf8"), `${t.root}|${t.root}`)
    }).pipe(Effect.provide(t.layer))
  })

  it.live("JSON on stdout denies a call (permissionDecision deny, or the older decision: block)", () => {
    const hooks = tempDir()
    const guard = script(
      hooks,
      "guard.sh",
      [
        "input=$(cat)",
        'case "$input" in',
        `  *'touch a'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"a is reserved"}}' ;;`,
        `  *'touch b'*) echo '{"decision":"block","reason":"b is reserved too"}' ;;`,
        "esac"
      ].join("\n")
    )
    const t = hookLoop({ steps: bashSteps("touch a", "touch b", "touch c"), hooks: { PreToolUse: on("*", guard) } })
    return Effect.gen(function* () {
      const turn = yield* runTurn("make files")
      assert.deepStrictEqual(
        ["a", "b", "c"].map((name) => existsSync(join(t.root, name))),
        [false, false, true]
      )
      assert.include(turn.requests[1], "a is reserved")
      assert.include(turn.requests[1], "b is reserved too")
    }).pipe(Effect.provide(t.layer))
  })

  it.live("updatedInput changes the call's input before it runs", () => {
    const hooks = tempDir()
    const rewrite = script(
      hooks,
      "rewrite.sh",
      `cat | grep -q 'touch wrong' && echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"touch right"}}}'\nexit 0`
    )
    const t = hookLoop({ steps: bashSteps("touch wrong"), hooks: { PreToolUse: on("Bash", rewrite) } })
    return Effect.gen(function* () {
      yield* runTurn("make a file")
      assert.isFalse(existsSync(join(t.root, "wrong")))
      assert.isTrue(existsSync(join(t.root, "right")))
    }).pipe(Effect.provide(t.layer))
  })

  it.live(
    "permissionDecision allow answers that call's permission ask, and only that call's, until its id is reused",
    () => {
      const root = tempDir()
      const home = tempDir()
      const allow = script(
        home,
        "allow.sh",
        `cat | grep -q 'git push' && echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'\nexit 0`
      )
      const layer = testLayer({
        root,
        paths: { home, config: tempDir(), data: tempDir() },
        config: { hooks: { PreToolUse: on("Bash", allow) } },
        plugins: [createHooksPlugin()]
      })
      return Effect.gen(function* () {
        const plugins = yield* Plugins
        const ask = (callID: string) =>
          plugins.trigger(
            "permission.ask",
            { sessionID: "s", callID, permission: "bash", patterns: ["git push"], metadata: {} },
            { status: "ask" }
          )
        yield* plugins.trigger(
          "tool.before",
          { tool: "bash", sessionID: "s", callID: "c1" },
          { args: { command: "git push" } }
        )
        yield* plugins.trigger(
          "tool.before",
          { tool: "bash", sessionID: "s", callID: "c2" },
          { args: { command: "ls" } }
        )
        assert.strictEqual((yield* ask("c1")).status, "allow")
        assert.strictEqual((yield* ask("c2")).status, "ask")
        assert.strictEqual((yield* ask("c3")).status, "ask")
        // The repeated-call guard's ask is never a hook's to answer.
        const doom = yield* plugins.trigger(
          "permission.ask",
          { sessionID: "s", callID: "c1", permission: "doom_loop", patterns: ["bash"], metadata: {} },
          { status: "ask" }
        )
        assert.strictEqual(doom.status, "ask")
        // A provider that reuses a call id: the new call's PreToolUse resets the approval.
        yield* plugins.trigger(
          "tool.before",
          { tool: "bash", sessionID: "s", callID: "c1" },
          { args: { command: "ls" } }
        )
        assert.strictEqual((yield* ask("c1")).status, "ask")
      }).pipe(Effect.provide(layer))
    }
  )

  it.live("a hook that hangs is killed with its process group at its timeout, and the call goes on", () => {
    const hooks = tempDir()
    const hang = script(
      hooks,
      "hang.sh",
      [`echo $$ > "${hooks}/hook.pid"`, "sleep 300 &", `echo $! > "${hooks}/child.pid"`, "wait"].join("\n")
    )
    const t = hookLoop({
      steps: bashSteps("touch made"),
      hooks: { PreToolUse: on("Bash", { command: hang, timeout: 1 }) }
    })
    return Effect.gen(function* () {
      yield* runTurn("make a file")
      assert.isTrue(existsSync(join(t.root, "made")))
      const pgid = Number(readFileSync(join(hooks, "hook.pid"), "utf8"))
      const child = Number(readFileSync(join(hooks, "child.pid"), "utf8"))
      assert.isAbove(child, 0)
      assert.deepStrictEqual(liveInGroup(pgid), [])
      assert.isTrue(
        t.logs.some((line) => line.includes(`\`${hang}\` did not finish within 1 s and was stopped`)),
        t.logs.join("\n")
      )
    }).pipe(Effect.provide(t.layer))
  })
})

describe("PostToolUse", () => {
  it.live("adds context after the tool's output (additionalContext, and exit 2's stderr); matchers pick tools", () => {
    const hooks = tempDir()
    const lint = script(
      hooks,
      "lint.sh",
      `cat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"Lint: 2 warnings in a.ts"}}'`
    )
    const format = script(
      hooks,
      "format.sh",
      'cat > /dev/null\necho "Formatting changed a.ts; read it again." >&2\nexit 2'
    )
    const writeOnly = script(hooks, "write-only.sh", `touch "${hooks}/write-hook-ran"`)
    const t = hookLoop({
      steps: bashSteps("echo hi > a.ts"),
      hooks: { PostToolUse: [...on("Bash", lint, format), ...on("Write|Edit", writeOnly)] }
    })
    return Effect.gen(function* () {
      const turn = yield* runTurn("write a.ts")
      assert.include(turn.requests[1], "PostToolUse hook feedback")
      assert.include(turn.requests[1], "Lint: 2 warnings in a.ts")
      assert.include(turn.requests[1], "Formatting changed a.ts; read it again.")
      assert.isFalse(existsSync(join(hooks, "write-hook-ran")))
    }).pipe(Effect.provide(t.layer))
  })
})
