import { existsSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { chunks } from "@lathe/core/testing"
import { Effect } from "effect"
import { hookLoop, on, readJson, runTurn, script, tempDir } from "./helpers.js"

const usage = { input: 1, output: 1 }
const answers = (count: number) =>
  Array.from({ length: count }, (_, index) => [chunks.text(`answer ${index + 1}`), chunks.finish(usage)])

describe("UserPromptSubmit and SessionStart", () => {
  it.live("plain stdout of SessionStart and UserPromptSubmit hooks reaches the model with the prompt", () => {
    const hooks = tempDir()
    const start = script(hooks, "start.sh", `cat > "${hooks}/start.json"\necho "Branch: main, 3 commits ahead"`)
    const submit = script(hooks, "submit.sh", `cat > "${hooks}/submit.json"\necho "Today's on-call: Ana"`)
    const t = hookLoop({
      steps: answers(1),
      hooks: { SessionStart: on("startup", start), UserPromptSubmit: on(undefined, submit) }
    })
    return Effect.gen(function* () {
      const turn = yield* runTurn("who is on call?")
      assert.include(turn.requests[0], "Branch: main, 3 commits ahead")
      assert.include(turn.requests[0], "Today's on-call: Ana")
      assert.deepStrictEqual(readJson(join(hooks, "submit.json")), {
        cwd: t.root,
        hook_event_name: "UserPromptSubmit",
        session_id: turn.sessionID,
        prompt: "who is on call?"
      })
      assert.strictEqual(readJson(join(hooks, "start.json")).source, "startup")
    }).pipe(Effect.provide(t.layer))
  })

  it.live("a UserPromptSubmit hook exiting 2 withdraws the prompt: no model call, and the person reads why", () => {
    const hooks = tempDir()
    const guard = script(
      hooks,
      "guard.sh",
      `if cat | grep -q password; then echo "Prompts may not carry passwords." >&2; exit 2; fi`
    )
    const t = hookLoop({ steps: answers(1), hooks: { UserPromptSubmit: on(undefined, guard) } })
    return Effect.gen(function* () {
      const turn = yield* runTurn("the password is hunter2")
      assert.lengthOf(turn.requests, 0)
      assert.lengthOf(turn.messages, 0)
      const notices = turn.events.flatMap((event) => (event.type === "notice" ? [event.message] : []))
      assert.deepStrictEqual(notices, ["A plugin withdrew the prompt: Prompts may not carry passwords."])
    }).pipe(Effect.provide(t.layer))
  })
})

describe("Stop", () => {
  it.live("a Stop hook sends the turn on once with its reason; stop_hook_active is true on the re-run", () => {
    const hooks = tempDir()
    const once = script(
      hooks,
      "once.sh",
      [
        "input=$(cat)",
        `printf '%s\\n' "$input" >> "${hooks}/stop.log"`,
        `case "$input" in *'"stop_hook_active":true'*) exit 0;; esac`,
        `echo '{"decision":"block","reason":"Run the tests before you stop."}'`
      ].join("\n")
    )
    const t = hookLoop({ steps: answers(3), hooks: { Stop: on(undefined, once) } })
    return Effect.gen(function* () {
      const turn = yield* runTurn("fix the bug")
      assert.lengthOf(turn.requests, 2)
      assert.include(turn.requests[1], "Run the tests before you stop.")
      const prompts = turn.messages.filter((message) => message.info.role === "user")
      assert.lengthOf(prompts, 2)
    }).pipe(Effect.provide(t.layer))
  })

  it.live("a Stop hook that always blocks sends the turn on 3 times, then Lathe stops asking", () => {
    const hooks = tempDir()
    const always = script(hooks, "always.sh", 'cat > /dev/null\necho "Keep going." >&2\nexit 2')
    const t = hookLoop({ steps: answers(6), hooks: { Stop: on(undefined, always) } })
    return Effect.gen(function* () {
      const turn = yield* runTurn("fix the bug")
      assert.lengthOf(turn.requests, 4)
      assert.include(turn.requests[3], "Keep going.")
    }).pipe(Effect.provide(t.layer))
  })
})

describe("Notification", () => {
  it.live("runs when the session waits for the person, with the message and its type", () => {
    const hooks = tempDir()
    const notify = script(
      hooks,
      "notify.sh",
      `cat > "${hooks}/notification.tmp" && mv "${hooks}/notification.tmp" "${hooks}/notification.json"`
    )
    const t = hookLoop({ steps: answers(1), hooks: { Notification: on("idle_prompt", notify) } })
    const file = join(hooks, "notification.json")
    return Effect.gen(function* () {
      const turn = yield* runTurn("hello")
      // Event hooks run in the background: wait for the file (at most 5 s).
      yield* Effect.promise(async () => {
        for (let waited = 0; !existsSync(file) && waited < 5000; waited += 50)
          await new Promise((resolve) => setTimeout(resolve, 50))
      })
      assert.deepStrictEqual(readJson(file), {
        cwd: t.root,
        hook_event_name: "Notification",
        session_id: turn.sessionID,
        message: "Lathe is waiting for your input",
        notification_type: "idle_prompt"
      })
    }).pipe(Effect.provide(t.layer))
  })
})
