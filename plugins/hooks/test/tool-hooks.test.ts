import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { pluginContext } from "@lathe/plugin/testing"
import { createHooksPlugin } from "../src/index.js"
import { bashSteps, hookLoop, on, readJson, script, tempDir } from "./helpers.js"

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
  it("a hook exiting 2 blocks a bash call, and the model reads its stderr", async () => {
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
    const turn = await t.run("clean up")
    assert.isTrue(existsSync(join(t.root, "victim")))
    assert.lengthOf(turn.requests, 2)
    assert.include(turn.read, "rm -rf is not allowed here: delete the files one by one.")
    assert.deepStrictEqual(readJson(join(hooks, "input.json")), {
      cwd: t.root,
      hook_event_name: "PreToolUse",
      session_id: turn.sessionID,
      tool_name: "Bash",
      tool_input: { command: "rm -rf victim", description: "run" },
      tool_use_id: "call_1"
    })
    assert.strictEqual(readFileSync(join(hooks, "project-dir"), "utf8"), `${t.root}|${t.root}`)
  })

  it("JSON on stdout denies a call (permissionDecision deny, or the older decision: block)", async () => {
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
    const turn = await t.run("make files")
    assert.deepStrictEqual(
      ["a", "b", "c"].map((name) => existsSync(join(t.root, name))),
      [false, false, true]
    )
    assert.include(turn.read, "a is reserved")
    assert.include(turn.read, "b is reserved too")
  })

  it("updatedInput changes the call's input before it runs", async () => {
    const hooks = tempDir()
    const rewrite = script(
      hooks,
      "rewrite.sh",
      `cat | grep -q 'touch wrong' && echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"touch right"}}}'\nexit 0`
    )
    const t = hookLoop({ steps: bashSteps("touch wrong"), hooks: { PreToolUse: on("Bash", rewrite) } })
    await t.run("make a file")
    assert.isFalse(existsSync(join(t.root, "wrong")))
    assert.isTrue(existsSync(join(t.root, "right")))
  })

  it("permissionDecision allow answers that call's permission ask, and only that call's, until its id is reused", async () => {
    const root = tempDir()
    const home = tempDir()
    const allow = script(
      home,
      "allow.sh",
      `cat | grep -q 'git push' && echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'\nexit 0`
    )
    const hooks = await createHooksPlugin().setup(
      pluginContext(root, { home, config: { hooks: { PreToolUse: on("Bash", allow) } } })
    )
    const before = (callID: string, command: string) =>
      hooks["tool.before"]?.({ tool: "bash", sessionID: "s", callID }, { args: { command } })
    const ask = async (callID: string, permission = "bash") => {
      const output: { status: "ask" | "allow" | "deny" } = { status: "ask" }
      await hooks["permission.ask"]?.(
        { sessionID: "s", callID, permission, patterns: [permission === "bash" ? "git push" : "bash"], metadata: {} },
        output
      )
      return output.status
    }
    await before("c1", "git push")
    await before("c2", "ls")
    assert.strictEqual(await ask("c1"), "allow")
    assert.strictEqual(await ask("c2"), "ask")
    assert.strictEqual(await ask("c3"), "ask")
    // The repeated-call guard's ask is never a hook's to answer.
    assert.strictEqual(await ask("c1", "doom_loop"), "ask")
    // A provider that reuses a call id: the new call's PreToolUse resets the approval.
    await before("c1", "ls")
    assert.strictEqual(await ask("c1"), "ask")
  })

  it("a hook that hangs is killed with its process group at its timeout, and the call goes on", async () => {
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
    const turn = await t.run("make a file")
    assert.isTrue(existsSync(join(t.root, "made")))
    const pgid = Number(readFileSync(join(hooks, "hook.pid"), "utf8"))
    const child = Number(readFileSync(join(hooks, "child.pid"), "utf8"))
    assert.isAbove(child, 0)
    assert.deepStrictEqual(liveInGroup(pgid), [])
    assert.isTrue(
      turn.logs.some((line) => line.message.includes(`\`${hang}\` did not finish within 1 s and was stopped`)),
      turn.logs.map((line) => line.message).join("\n")
    )
  })
})

describe("PostToolUse", () => {
  it("adds context after the tool's output (additionalContext, and exit 2's stderr); matchers pick tools", async () => {
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
    const turn = await t.run("write a.ts")
    assert.include(turn.read, "PostToolUse hook feedback")
    assert.include(turn.read, "Lint: 2 warnings in a.ts")
    assert.include(turn.read, "Formatting changed a.ts; read it again.")
    assert.isFalse(existsSync(join(hooks, "write-hook-ran")))
  })
})
