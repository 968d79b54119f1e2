import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { pluginContext } from "@lathe/plugin/testing"
import { createHooksPlugin } from "../src/index.js"
import { hookLoop, on, readJson, script, tempDir } from "./helpers.js"

const answers = (count: number) =>
  Array.from({ length: count }, (_, index) => ({ steps: [{ text: `answer ${index + 1}` }] }))

describe("UserPromptSubmit and SessionStart", () => {
  it("plain stdout of SessionStart and UserPromptSubmit hooks reaches the model with the prompt", async () => {
    const hooks = tempDir()
    const start = script(hooks, "start.sh", `cat > "${hooks}/start.json"\necho "Branch: main, 3 commits ahead"`)
    const submit = script(hooks, "submit.sh", `cat > "${hooks}/submit.json"\necho "Today's on-call: Ana"`)
    const t = hookLoop({
      steps: answers(1),
      hooks: { SessionStart: on("startup", start), UserPromptSubmit: on(undefined, submit) }
    })
    const turn = await t.run("who is on call?")
    assert.include(turn.read, "Branch: main, 3 commits ahead")
    assert.include(turn.read, "Today's on-call: Ana")
    assert.deepStrictEqual(readJson(join(hooks, "submit.json")), {
      cwd: t.root,
      hook_event_name: "UserPromptSubmit",
      session_id: turn.sessionID,
      prompt: "who is on call?"
    })
    assert.strictEqual(readJson(join(hooks, "start.json")).source, "startup")
  })

  it("a UserPromptSubmit hook exiting 2 withdraws the prompt: no model call, and the person reads why", async () => {
    const hooks = tempDir()
    const guard = script(
      hooks,
      "guard.sh",
      `if cat | grep -q password; then echo "Prompts may not carry passwords." >&2; exit 2; fi`
    )
    const t = hookLoop({ steps: answers(1), hooks: { UserPromptSubmit: on(undefined, guard) } })
    const turn = await t.run("the password is hunter2")
    assert.lengthOf(turn.requests, 0)
    assert.lengthOf(turn.messages, 0)
    const notices = turn.events.flatMap((event) => (event.type === "notice" ? [event.message] : []))
    assert.deepStrictEqual(notices, ["A plugin withdrew the prompt: Prompts may not carry passwords."])
  })
})

describe("Stop", () => {
  it("a Stop hook sends the turn on once with its reason; stop_hook_active is true on the re-run", async () => {
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
    const turn = await t.run("fix the bug")
    assert.lengthOf(turn.requests, 2)
    assert.include(turn.read, "Run the tests before you stop.")
    const prompts = turn.messages.filter((message) => message.info.role === "user")
    assert.lengthOf(prompts, 2)
  })

  it("a Stop hook that always blocks sends the turn on 3 times, then Lathe stops asking", async () => {
    const hooks = tempDir()
    const always = script(hooks, "always.sh", 'cat > /dev/null\necho "Keep going." >&2\nexit 2')
    const t = hookLoop({ steps: answers(6), hooks: { Stop: on(undefined, always) } })
    const turn = await t.run("fix the bug")
    assert.lengthOf(turn.requests, 4)
    assert.include(turn.read, "Keep going.")
  })
})

describe("Notification", () => {
  it("runs when the session waits for the person, with the message and its type", async () => {
    const hooks = tempDir()
    const notify = script(
      hooks,
      "notify.sh",
      `cat > "${hooks}/notification.tmp" && mv "${hooks}/notification.tmp" "${hooks}/notification.json"`
    )
    const root = tempDir()
    const config = { hooks: { Notification: on("idle_prompt", notify) } }
    // The host delivers each event to event hooks in the background; here the plugin's own event hook, awaited.
    const plugin = await createHooksPlugin().setup(pluginContext(root, { home: tempDir(), config }))
    await plugin.event?.({ event: { type: "session.idle", sessionID: "s1" } }, {})
    const file = join(hooks, "notification.json")
    assert.deepStrictEqual(readJson(file), {
      cwd: root,
      hook_event_name: "Notification",
      session_id: "s1",
      message: "Lathe is waiting for your input",
      notification_type: "idle_prompt"
    })
  })
})
