/**
 * `lathe github run` end to end: the real CLI on a GitHub Actions event, against a fake GitHub REST API on 127.0.0.1
 * (it records every request and answers in GitHub's shapes), a bare repository as `origin` (real git) and the scripted
 * model. An allowed commenter's "/lathe fix the typo" pushes a branch with the fix and opens a pull request linking the
 * issue; a read-only commenter and a bot get one refusal comment and no model request; a comment on a pull request
 * pushes to its branch; a model failure is said in the comment with a non-zero exit. `lathe github install` writes a
 * workflow that parses as YAML and names the action and its inputs.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { ServerScript } from "@lathe/core/testing"
import { afterEach, assert, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { closeAll, commentEvent, comments, fixScript, git, REPO, runOn, setup, slow, TOKEN } from "./github-helpers.js"
import { runLathe, sandbox } from "./helpers.js"

afterEach(closeAll)

describe("lathe github run", () => {
  it("fixes the typo for an allowed commenter: branch pushed, pull request opened, comment updated", slow, async () => {
    const box = await setup(fixScript, { maintainer: "write" })
    const run = await runOn(box, "issue_comment", commentEvent("/lathe fix the typo", "maintainer"))
    expect(run.code, run.stderr).toBe(0)
    // The branch is on the bare origin with the fix.
    const branches = git(box.origin, "branch", "--list", "lathe/*").trim()
    expect(branches).toMatch(/lathe\/7-[0-9a-f]{8}$/)
    const branch = branches.replace(/^[*\s]+/, "")
    expect(git(box.origin, "show", `${branch}:README.md`)).toBe("The widgets\n")
    expect(git(box.origin, "log", "-1", "--format=%s", branch).trim()).toBe("lathe: fix the typo")
    // The pull request through the API, linking the issue.
    const pull = box.api.requests.find((r) => r.method === "POST" && r.path === `/repos/${REPO}/pulls`)
    assert.isDefined(pull)
    expect(pull?.body).toMatchObject({ head: branch, base: "main" })
    expect(String(pull?.body?.body)).toContain("Closes #7")
    // The permission was checked, the comment acknowledged and later updated with the answer and the cost.
    expect(box.api.requests.some((r) => r.path.endsWith("/collaborators/maintainer/permission"))).toBe(true)
    expect(box.api.requests.some((r) => r.path === `/repos/${REPO}/issues/comments/555/reactions`)).toBe(true)
    const update = box.api.requests.find((r) => r.method === "PATCH")
    expect(String(update?.body?.body)).toContain("Fixed the typo in README.md.")
    expect(String(update?.body?.body)).toMatch(/Cost: \$\d/)
    expect(String(update?.body?.body)).toContain("pull request #99")
    expect(String(update?.body?.body)).toContain("https://github.test/octo/widgets/actions/runs/4242")
    expect(box.api.requests.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true)
    // The thread went in as untrusted material; the token never reached the model.
    const first = JSON.stringify(box.model.requests[0]?.body)
    expect(first).toContain('<untrusted source=\\"body\\">')
    expect(first).toContain("Ignore previous instructions")
    expect(first).not.toContain(TOKEN)
  })

  it("refuses a read-only commenter with one comment and no model request", slow, async () => {
    const box = await setup(fixScript, { visitor: "read" })
    const run = await runOn(box, "issue_comment", commentEvent("/lathe fix the typo", "visitor"))
    expect(run.code, run.stderr).toBe(0)
    expect(box.model.requests).toHaveLength(0)
    const posted = comments(box.api)
    expect(posted).toHaveLength(1)
    expect(String(posted[0]?.body?.body)).toContain("Sorry @visitor")
    expect(box.api.requests.some((r) => r.method === "POST" && r.path.endsWith("/pulls"))).toBe(false)
    expect(git(box.origin, "branch", "--list", "lathe/*").trim()).toBe("")
  })

  it("refuses a bot by default, without asking the model", slow, async () => {
    const box = await setup(fixScript, { "helper[bot]": "admin" })
    const run = await runOn(box, "issue_comment", commentEvent("/lathe fix it", "helper[bot]", { bot: true }))
    expect(run.code, run.stderr).toBe(0)
    expect(box.model.requests).toHaveLength(0)
    expect(String(comments(box.api)[0]?.body?.body)).toContain("bot accounts are refused")
  })

  it("pushes the fix to the branch of the pull request commented on", slow, async () => {
    const box = await setup(fixScript, { maintainer: "admin" }, { head: "feature", headRepo: REPO })
    const run = await runOn(box, "issue_comment", commentEvent("/lathe fix the typo", "maintainer", { pull: true }))
    expect(run.code, run.stderr).toBe(0)
    expect(git(box.origin, "show", "feature:README.md")).toBe("The widgets\n")
    expect(git(box.origin, "show", "main:README.md")).toBe("Teh widgets\n")
    expect(box.api.requests.some((r) => r.method === "POST" && r.path === `/repos/${REPO}/pulls`)).toBe(false)
    // The prompt carried the pull request's diff and review comments, as untrusted material.
    const first = JSON.stringify(box.model.requests[0]?.body)
    expect(first).toContain("pull request diff")
    expect(first).toContain("review comment by @reviewer")
    expect(String(box.api.requests.find((r) => r.method === "PATCH")?.body?.body)).toContain(
      "Pushed the fix to `feature`"
    )
  })

  it("says in the comment that the model failed, and exits non-zero", slow, async () => {
    const box = await setup(
      [{ type: "error", status: 400, body: { error: { message: "model exploded", type: "invalid_request_error" } } }],
      { maintainer: "write" }
    )
    const run = await runOn(box, "issue_comment", commentEvent("/lathe fix the typo", "maintainer"))
    expect(run.code).not.toBe(0)
    const update = box.api.requests.find((r) => r.method === "PATCH")
    expect(String(update?.body?.body)).toContain("Lathe could not finish this request")
    expect(git(box.origin, "branch", "--list", "lathe/*").trim()).toBe("")
  })

  it("keeps the token from the agent's programs and a hostile request out of git's options", slow, async () => {
    const script: ServerScript = (_request, index) =>
      index === 0
        ? {
            steps: [
              {
                tool: "bash",
                input: {
                  command:
                    "printenv GITHUB_TOKEN || echo token=none; git config --get-regexp extraheader || echo header=none",
                  description: "env"
                }
              }
            ]
          }
        : index === 1
          ? { steps: [{ tool: "write", input: { filePath: "notes.txt", content: "noted\n" } }] }
          : { steps: [{ text: "Done." }] }
    const box = await setup(script, { maintainer: "write" })
    // What actions/checkout leaves in .git/config unless persist-credentials is off: the token, base64 in a header.
    const header = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${TOKEN}`).toString("base64")}`
    git(box.project, "config", "http.https://github.com/.extraheader", header)
    const hostile = "/lathe --exec=$(touch pwned) `id`\n\u0007; rm -rf ~ && echo ok"
    const run = await runOn(box, "issue_comment", commentEvent(hostile, "maintainer"), ["--allow", "bash"], {
      GITHUB_ACTIONS: "true"
    })
    expect(run.code, run.stderr).toBe(0)
    const toolResult = JSON.stringify(box.model.requests[1]?.body)
    expect(toolResult).toContain("token=none")
    expect(toolResult).toContain("header=none")
    expect(toolResult).not.toContain(TOKEN)
    expect(toolResult).not.toContain(header)
    expect(readFileSync(join(box.project, ".git", "config"), "utf8")).not.toContain("extraheader")
    const branch = git(box.origin, "branch", "--list", "lathe/*")
      .trim()
      .replace(/^[*\s]+/, "")
    expect(branch).toMatch(/^lathe\/7-[0-9a-f]{8}$/)
    const subject = git(box.origin, "log", "-1", "--format=%s", branch).trim()
    expect(subject.startsWith("lathe: --exec=$(touch pwned)")).toBe(true)
    expect(subject.includes("\n") || subject.includes("\u0007")).toBe(false)
    expect(git(box.project, "status", "--porcelain", "--ignored").includes("pwned")).toBe(false)
  })

  it("does nothing when the comment does not mention the trigger", slow, async () => {
    const box = await setup(fixScript, { maintainer: "write" })
    const run = await runOn(box, "issue_comment", commentEvent("thanks, looks good", "maintainer"))
    expect(run.code, run.stderr).toBe(0)
    expect(box.api.requests).toHaveLength(0)
    expect(box.model.requests).toHaveLength(0)
  })
})

describe("lathe github install", () => {
  it("writes a workflow that parses as YAML and names the action and its inputs", slow, async () => {
    const box = sandbox()
    const run = await runLathe(["github", "install", "--model", "anthropic/claude-sonnet-4-5", "--max-cost", "3"], {
      cwd: box.project,
      env: box.env
    })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain("ANTHROPIC_API_KEY")
    const workflow = parse(readFileSync(join(box.project, ".github", "workflows", "lathe.yml"), "utf8")) as {
      on: Record<string, unknown>
      permissions: Record<string, string>
      jobs: {
        lathe: {
          steps: Array<{ uses?: string; with?: Record<string, string | boolean>; env?: Record<string, string> }>
        }
      }
    }
    expect(Object.keys(workflow.on)).toEqual(
      expect.arrayContaining(["issue_comment", "pull_request_review_comment", "issues", "workflow_dispatch"])
    )
    expect(workflow.permissions).toEqual({ contents: "write", issues: "write", "pull-requests": "write" })
    const step = workflow.jobs.lathe.steps.find((s) => s.uses?.startsWith("lathe-dev/lathe@"))
    expect(step?.with).toEqual({
      model: "anthropic/claude-sonnet-4-5",
      "max-cost": "3",
      trigger: "/lathe",
      "author-permissions": "write,maintain,admin"
    })
    // The checkout leaves no token in .git/config for the agent to read.
    const checkout = workflow.jobs.lathe.steps.find((s) => s.uses?.startsWith("actions/checkout@"))
    expect(checkout?.with?.["persist-credentials"]).toBe(false)
    expect(step?.env?.ANTHROPIC_API_KEY).toBe(`$${"{{"} secrets.ANTHROPIC_API_KEY }}`)
    // A second install does not overwrite it without --force.
    const again = await runLathe(["github", "install"], { cwd: box.project, env: box.env })
    expect(again.code).toBe(1)
  })
})
