import { assert, describe, it } from "@effect/vitest"
import { Cause, Schema } from "effect"
import { logText } from "../src/plugin-host/log-text.js"

class Boom extends Schema.TaggedError<Boom>()("Boom", { message: Schema.String }) {}
class Bare extends Schema.TaggedError<Bare>()("Bare", {}) {}

describe("logText", () => {
  it("is the sentence without a plugin's log fields", () => {
    const sentence =
      "Ignored the project's skills in /p/.lathe/skills: this project is not trusted. Run `lathe trust` in /p to load them."
    assert.strictEqual(logText([sentence, { paths: ["/p/.lathe/skills"] }]), sentence)
    assert.strictEqual(
      logText(["Agent file /a.md: ignored color.", { path: "/a.md" }]),
      "Agent file /a.md: ignored color."
    )
    assert.strictEqual(logText(["Skipped skill /s/SKILL.md: no name.", {}]), "Skipped skill /s/SKILL.md: no name.")
    assert.strictEqual(logText("one sentence"), "one sentence")
  })

  it("keeps what an error, a typed failure or a cause says", () => {
    assert.strictEqual(logText(["snapshot failed", new Error("git not found")]), "snapshot failed: git not found")
    assert.strictEqual(logText(["store", new Boom({ message: "disk full" })]), "store: disk full")
    assert.strictEqual(logText(["summary not written", new Bare()]), "summary not written: Bare")
    assert.strictEqual(
      logText(["summary not written", Cause.fail(new Boom({ message: "no model" }))]),
      "summary not written: no model"
    )
    assert.strictEqual(logText(["took", 3, "tries"]), "took: 3: tries")
  })
})
