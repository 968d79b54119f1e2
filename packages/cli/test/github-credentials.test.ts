/**
 * The job's git credentials leave the checkout's config before the turn: the entry actions/checkout@v4 writes into
 * .git/config and the one newer versions keep in a file .git/config includes are both taken out (real git), and come
 * back only as GIT_CONFIG_* variables for Lathe's own fetch and push.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { credentialEnv, takeCredentials } from "../src/commands/github-credentials.js"

const KEY = "http.https://github.com/.extraheader"

describe("takeCredentials", () => {
  it("takes the persisted headers out of the checkout's config files and hands them over in memory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-gh-cred-"))
    const repo = join(dir, "repo")
    mkdirSync(repo)
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, GIT_CONFIG_NOSYSTEM: "1" }
    const git = (...args: Array<string>) => spawnSync("git", args, { cwd: repo, env, encoding: "utf8" })
    git("init", "-q")
    git("config", KEY, "AUTHORIZATION: basic AAA")
    const included = join(dir, "credentials.config")
    writeFileSync(included, '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic BBB\n')
    git("config", `includeIf.gitdir:${join(repo, ".git")}.path`, included)
    expect(git("config", "--get-all", KEY).stdout.trim().split("\n")).toHaveLength(2)

    const entries = await takeCredentials(repo, env, "ghs_unused", "https://github.com")
    expect(entries).toEqual([
      { key: KEY, value: "AUTHORIZATION: basic AAA" },
      { key: KEY, value: "AUTHORIZATION: basic BBB" }
    ])
    expect(git("config", "--get-all", KEY).status).toBe(1)
    expect(credentialEnv(entries)).toEqual({
      GIT_CONFIG_COUNT: "2",
      GIT_CONFIG_KEY_0: KEY,
      GIT_CONFIG_VALUE_0: "AUTHORIZATION: basic AAA",
      GIT_CONFIG_KEY_1: KEY,
      GIT_CONFIG_VALUE_1: "AUTHORIZATION: basic BBB"
    })
    // Nothing persisted (persist-credentials: false): the header the job's token gives, for the server's host.
    const fresh = await takeCredentials(repo, env, "ghs_token", "https://ghe.example/")
    expect(fresh).toEqual([
      {
        key: "http.https://ghe.example/.extraheader",
        value: `AUTHORIZATION: basic ${Buffer.from("x-access-token:ghs_token").toString("base64")}`
      }
    ])
  })
})
