/**
 * `lathe github run` on a pull request whose branch Lathe may not push to: a fork's (the fix goes on a branch of this
 * repository holding the pull request's head, with a pull request against its base), and a branch of this repository
 * that refuses the push (a pre-receive hook here; a protected branch on GitHub: a pull request against that branch).
 * The real CLI, a fake GitHub REST API on 127.0.0.1, a bare `origin` and the scripted model.
 */
import { chmodSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, describe, expect, it } from "vitest"
import { closeAll, commentEvent, fixScript, git, REPO, runOn, setup, slow } from "./github-helpers.js"

afterEach(closeAll)

const createdPull = (box: Awaited<ReturnType<typeof setup>>) =>
  box.api.requests.find((r) => r.method === "POST" && r.path === `/repos/${REPO}/pulls`)

describe("lathe github run on a pull request it cannot push to", () => {
  it(
    "puts a fork's fix on a branch of origin with the pull request's head, and opens a pull request",
    slow,
    async () => {
      const box = await setup(fixScript, { maintainer: "write" }, { head: "main", headRepo: "contributor/widgets" })
      const run = await runOn(box, "issue_comment", commentEvent("/lathe fix the typo", "maintainer", { pull: true }))
      expect(run.code, run.stderr).toBe(0)
      // A new branch in origin: the fork's commit (only refs/pull/7/head had it) plus the fix on top.
      const branch = git(box.origin, "branch", "--list", "lathe/*")
        .trim()
        .replace(/^[*\s]+/, "")
      expect(branch).toMatch(/^lathe\/pr-7-[0-9a-f]{8}$/)
      expect(git(box.origin, "show", `${branch}:README.md`)).toBe("The widgets\n")
      expect(git(box.origin, "show", `${branch}:FORK.md`)).toBe("from the fork\n")
      expect(git(box.origin, "log", "--format=%s", `main..${branch}`).trim().split("\n")).toEqual([
        "lathe: fix the typo",
        "fork work"
      ])
      // Nothing pushed to the fork's branch name in origin, nor to main.
      expect(git(box.origin, "show", "main:README.md")).toBe("Teh widgets\n")
      // The pull request: from the new branch, against the pull request's base, its body linking the original.
      const pull = createdPull(box)
      assert.isDefined(pull)
      expect(pull?.body).toMatchObject({ head: branch, base: "main" })
      const body = String(pull?.body?.body)
      expect(body).toContain("For #7")
      expect(body).toContain("contributor/widgets:main")
      expect(body).not.toContain("Closes #7")
      const update = String(box.api.requests.find((r) => r.method === "PATCH")?.body?.body)
      expect(update).toContain("in a fork")
      expect(update).toContain("pull request #99")
      expect(update).toContain(branch)
    }
  )

  it("names the maintainers' edits a fork allows, and copes with a deleted fork", slow, async () => {
    const box = await setup(fixScript, { maintainer: "write" }, { head: "patch-1", headRepo: null })
    const run = await runOn(box, "issue_comment", commentEvent("/lathe fix the typo", "maintainer", { pull: true }))
    expect(run.code, run.stderr).toBe(0)
    expect(String(createdPull(box)?.body?.body)).toContain("a deleted fork:patch-1")
    const allowing = await setup(
      fixScript,
      { maintainer: "write" },
      { head: "patch-1", headRepo: "contributor/widgets", maintainerCanModify: true }
    )
    const again = await runOn(allowing, "issue_comment", commentEvent("/lathe fix it", "maintainer", { pull: true }))
    expect(again.code, again.stderr).toBe(0)
    expect(String(createdPull(allowing)?.body?.body)).toContain("allows edits by maintainers")
  })

  it("opens a pull request against the branch when the push to it is refused, and says so", slow, async () => {
    const box = await setup(fixScript, { maintainer: "admin" }, { head: "feature", headRepo: REPO })
    // origin refuses any update of `feature`, as a protected branch does.
    const hook = join(box.origin, "hooks", "pre-receive")
    writeFileSync(
      hook,
      '#!/bin/sh\nwhile read old new ref; do\n  if [ "$ref" = refs/heads/feature ]; then\n    echo "feature is protected" >&2\n    exit 1\n  fi\ndone\n'
    )
    chmodSync(hook, 0o755)
    const run = await runOn(box, "issue_comment", commentEvent("/lathe fix the typo", "maintainer", { pull: true }))
    expect(run.code, run.stderr).toBe(0)
    expect(git(box.origin, "show", "feature:README.md")).toBe("Teh widgets\n")
    const branch = git(box.origin, "branch", "--list", "lathe/*")
      .trim()
      .replace(/^[*\s]+/, "")
    expect(branch).toMatch(/^lathe\/pr-7-[0-9a-f]{8}$/)
    expect(git(box.origin, "show", `${branch}:README.md`)).toBe("The widgets\n")
    const pull = createdPull(box)
    expect(pull?.body).toMatchObject({ head: branch, base: "feature" })
    expect(String(pull?.body?.body)).toContain("For #7")
    const update = String(box.api.requests.find((r) => r.method === "PATCH")?.body?.body)
    expect(update).toContain("Could not push to `feature`")
    expect(update).toContain("pull request #99")
  })

  it("never pushes to the default branch, even as a pull request's own branch", slow, async () => {
    const box = await setup(fixScript, { maintainer: "admin" }, { head: "main", headRepo: REPO })
    const run = await runOn(box, "issue_comment", commentEvent("/lathe fix the typo", "maintainer", { pull: true }))
    expect(run.code, run.stderr).toBe(0)
    expect(git(box.origin, "show", "main:README.md")).toBe("Teh widgets\n")
    const pull = createdPull(box)
    expect(pull?.body).toMatchObject({ base: "main" })
    expect(String(pull?.body?.head)).toMatch(/^lathe\/pr-7-[0-9a-f]{8}$/)
    expect(String(box.api.requests.find((r) => r.method === "PATCH")?.body?.body)).toContain("default branch")
  })
})
