import { execFileSync, spawnSync } from "node:child_process"
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { gitOutput, prefetchStartupGit, startupGitCommands } from "../src/process/git-prefetch.js"
import {
  GIT_SAFE_TRANSPORT,
  GitConfigRefused,
  gitSafeEnv,
  prepareSafeGit,
  safeGitOverrides
} from "../src/process/git-safe.js"

// Each case plants a program in a repository's config (or a file it reaches), shows that plain git runs it, then
// that the same command through the hardened options and environment does not. The planted programs are scripts that
// only leave a marker file.

const IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"]
const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", [...IDENTITY, ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim()

const temp = (name: string) => realpathSync(mkdtempSync(join(tmpdir(), `lathe-git-safe-${name}-`)))

const repo = (name = "repo") => {
  const dir = temp(name)
  git(dir, "init", "-q", "-b", "main")
  writeFileSync(join(dir, "a.txt"), "a\n")
  git(dir, "add", "-A")
  git(dir, "commit", "-qm", "first")
  return dir
}

/** A folder of marker-writing scripts: `program(name)` is the path of one that touches `<marks>/<name>`. */
const planted = () => {
  const marks = temp("marks")
  const program = (name: string, then = "exit 0") => {
    const file = join(marks, "bin", name)
    mkdirSync(join(marks, "bin"), { recursive: true })
    writeFileSync(file, `#!/bin/sh\ntouch '${marks}/${name}'\n${then}\n`)
    chmodSync(file, 0o755)
    return file
  }
  const seen = () => readdirSync(marks).filter((name) => name !== "bin")
  const clear = () => {
    for (const name of seen()) rmSync(join(marks, name))
  }
  return { program, seen, clear }
}

/** Runs plain git; the exit status does not matter (a planted program may make it fail). */
const plain = (cwd: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) =>
  spawnSync("git", [...IDENTITY, ...args], { cwd, env: { ...process.env, ...env }, stdio: "ignore", timeout: 20_000 })

/** Runs git the hardened way; returns its exit status. */
const hardened = async (cwd: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) => {
  const safe = await prepareSafeGit(cwd, { env: { ...process.env, ...env } })
  return spawnSync("git", [...safe.options, ...IDENTITY, ...args], {
    cwd,
    env: safe.env,
    stdio: "ignore",
    timeout: 20_000
  }).status
}

/** Plain git runs `name`'s program; hardened git does not. */
const proves = async (
  marks: ReturnType<typeof planted>,
  name: string,
  cwd: string,
  args: ReadonlyArray<string>,
  options: { readonly env?: NodeJS.ProcessEnv; readonly reset?: () => void } = {}
) => {
  marks.clear()
  plain(cwd, args, options.env)
  assert.include(marks.seen(), name, `plain git ${args.join(" ")} runs the planted ${name}`)
  marks.clear()
  options.reset?.()
  await hardened(cwd, args, options.env)
  assert.deepStrictEqual(marks.seen(), [], `hardened git ${args.join(" ")} runs nothing`)
}

/** Makes git hash a.txt again (its stat data no longer matches the index), through its clean filter if it has one. */
const touchLater = (dir: string, text = "a\n") => {
  writeFileSync(join(dir, "a.txt"), text)
  const future = new Date(Date.now() + 60_000 + Math.floor(Math.random() * 60_000))
  utimesSync(join(dir, "a.txt"), future, future)
}

describe("hardened git: keys of .git/config", () => {
  it("core.fsmonitor (git status)", async () => {
    const marks = planted()
    const dir = repo()
    git(dir, "config", "core.fsmonitor", marks.program("fsmonitor", "exit 1"))
    await proves(marks, "fsmonitor", dir, ["--no-optional-locks", "status", "--porcelain"])
  })

  it("hooks in .git/hooks and in core.hooksPath (git add, git commit)", async () => {
    const marks = planted()
    const dir = repo()
    const hooks = join(dir, ".git", "hooks")
    mkdirSync(hooks, { recursive: true })
    writeFileSync(join(hooks, "post-index-change"), `#!/bin/sh\nexec '${marks.program("post-index-change")}'\n`)
    chmodSync(join(hooks, "post-index-change"), 0o755)
    touchLater(dir)
    await proves(marks, "post-index-change", dir, ["add", "a.txt"], { reset: () => touchLater(dir) })
    const own = join(dir, "own-hooks")
    mkdirSync(own)
    writeFileSync(join(own, "pre-commit"), `#!/bin/sh\nexec '${marks.program("pre-commit")}'\n`)
    chmodSync(join(own, "pre-commit"), 0o755)
    git(dir, "config", "core.hooksPath", own)
    await proves(marks, "pre-commit", dir, ["commit", "-q", "--allow-empty", "-m", "x"])
  })

  it("core.pager and pager.<command> (git log at a terminal)", async () => {
    const marks = planted()
    const dir = repo()
    git(dir, "config", "core.pager", marks.program("core-pager", "cat"))
    git(dir, "config", "pager.log", marks.program("pager-log", "cat"))
    const atTerminal = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env) =>
      spawnSync("script", ["-qec", ["git", ...args].map((a) => `'${a}'`).join(" "), "/dev/null"], {
        cwd: dir,
        env: { ...env, TERM: "xterm" },
        stdio: "ignore"
      })
    atTerminal(["log", "-1"])
    atTerminal(["show", "-s"])
    assert.sameMembers(marks.seen(), ["core-pager", "pager-log"])
    marks.clear()
    const safe = await prepareSafeGit(dir)
    atTerminal([...safe.options, "log", "-1"], safe.env)
    atTerminal([...safe.options, "show", "-s"], safe.env)
    assert.deepStrictEqual(marks.seen(), [])
  })

  it("core.editor and sequence.editor (git commit, git rebase -i)", async () => {
    const marks = planted()
    const dir = repo()
    git(dir, "commit", "-q", "--allow-empty", "-m", "second")
    git(dir, "config", "core.editor", marks.program("editor"))
    git(dir, "config", "sequence.editor", marks.program("sequence-editor"))
    await proves(marks, "editor", dir, ["commit", "--allow-empty"])
    await proves(marks, "sequence-editor", dir, ["rebase", "-i", "HEAD~1"], {
      reset: () => spawnSync("git", ["rebase", "--abort"], { cwd: dir, stdio: "ignore" })
    })
  })

  it("credential.helper (also URL-scoped) and core.askPass (git credential fill)", async () => {
    const marks = planted()
    const dir = repo()
    git(dir, "config", "credential.helper", marks.program("helper"))
    git(dir, "config", "credential.https://example.com.helper", marks.program("url-helper"))
    git(dir, "config", "core.askPass", marks.program("askpass", "echo x"))
    const fill = (run: (input: string) => void) => run("protocol=https\nhost=example.com\n\n")
    fill((input) =>
      spawnSync("git", ["credential", "fill"], {
        cwd: dir,
        input,
        stdio: ["pipe", "ignore", "ignore"],
        timeout: 10_000
      })
    )
    assert.sameMembers(marks.seen(), ["helper", "url-helper", "askpass"])
    marks.clear()
    const safe = await prepareSafeGit(dir)
    fill((input) =>
      spawnSync("git", [...safe.options, "credential", "fill"], {
        cwd: dir,
        env: safe.env,
        input,
        stdio: ["pipe", "ignore", "ignore"],
        timeout: 10_000
      })
    )
    assert.deepStrictEqual(marks.seen(), [])
  })

  it("core.sshCommand and remote.<name>.uploadpack (git ls-remote, git fetch)", async () => {
    const marks = planted()
    const dir = repo()
    const other = repo("other")
    git(dir, "config", "core.sshCommand", marks.program("ssh", "exit 1"))
    await proves(marks, "ssh", dir, ["ls-remote", "ssh://lathe.invalid/x"])
    git(dir, "remote", "add", "origin", other)
    git(dir, "config", "remote.origin.uploadpack", marks.program("uploadpack", 'exec git-upload-pack "$@"'))
    marks.clear()
    plain(dir, ["fetch", "-q", "origin"])
    assert.deepStrictEqual(marks.seen(), ["uploadpack"])
    marks.clear()
    assert.strictEqual(await hardened(dir, ["fetch", ...GIT_SAFE_TRANSPORT, "-q", "origin"]), 0)
    assert.deepStrictEqual(marks.seen(), [])
  })

  it("protocol.ext.allow with an ext:: remote (git ls-remote)", async () => {
    const marks = planted()
    const dir = repo()
    git(dir, "config", "protocol.ext.allow", "always")
    await proves(marks, "ext", dir, ["ls-remote", `ext::${marks.program("ext", "exit 1")}`])
  })

  it("diff.external, and diff.<driver>.command / textconv picked by .gitattributes (git diff, git log -p)", async () => {
    const marks = planted()
    const dir = repo()
    writeFileSync(join(dir, "a.txt"), "changed\n")
    git(dir, "config", "diff.external", marks.program("external"))
    await proves(marks, "external", dir, ["diff"])
    git(dir, "config", "--unset", "diff.external")
    writeFileSync(join(dir, ".gitattributes"), "*.txt diff=evil\n")
    git(dir, "config", "diff.evil.command", marks.program("diff-command"))
    await proves(marks, "diff-command", dir, ["diff"])
    git(dir, "config", "--unset", "diff.evil.command")
    git(dir, "config", "diff.evil.textconv", marks.program("textconv", 'cat "$1"'))
    await proves(marks, "textconv", dir, ["diff"])
  })

  it("filter.<driver>.clean / smudge / process picked by .gitattributes (git add, git checkout)", async () => {
    const marks = planted()
    const dir = repo()
    writeFileSync(join(dir, ".gitattributes"), "a.txt filter=evil\nb.txt filter=proc\n")
    git(dir, "config", "filter.evil.clean", marks.program("clean", "cat"))
    git(dir, "config", "filter.evil.smudge", marks.program("smudge", "cat"))
    git(dir, "config", "filter.evil.required", "true")
    git(dir, "config", "filter.proc.process", marks.program("process", "exit 1"))
    touchLater(dir)
    await proves(marks, "clean", dir, ["add", "a.txt"], { reset: () => touchLater(dir) })
    rmSync(join(dir, "a.txt"))
    await proves(marks, "smudge", dir, ["checkout", "--", "a.txt"], { reset: () => rmSync(join(dir, "a.txt")) })
    writeFileSync(join(dir, "b.txt"), "b\n")
    await proves(marks, "process", dir, ["add", "b.txt"])
  })

  it("merge.<driver>.driver picked by .gitattributes (git merge)", async () => {
    const marks = planted()
    const dir = repo()
    writeFileSync(join(dir, ".gitattributes"), "a.txt merge=evil\n")
    git(dir, "add", ".gitattributes")
    git(dir, "commit", "-qm", "attributes")
    git(dir, "branch", "other")
    writeFileSync(join(dir, "a.txt"), "ours\n")
    git(dir, "commit", "-qam", "ours")
    git(dir, "checkout", "-q", "other")
    writeFileSync(join(dir, "a.txt"), "theirs\n")
    git(dir, "commit", "-qam", "theirs")
    git(dir, "checkout", "-q", "main")
    const ours = git(dir, "rev-parse", "HEAD")
    git(dir, "config", "merge.evil.driver", `${marks.program("merge")} %A`)
    marks.clear()
    plain(dir, ["merge", "-q", "other"])
    assert.include(marks.seen(), "merge")
    spawnSync("git", ["merge", "--abort"], { cwd: dir, stdio: "ignore" })
    git(dir, "reset", "-q", "--hard", ours)
    marks.clear()
    await hardened(dir, ["merge", "-q", "other"])
    assert.deepStrictEqual(marks.seen(), [])
  })

  it("core.alternateRefsCommand of a repository with alternates (git fetch)", async () => {
    const marks = planted()
    const source = repo("source")
    const dir = temp("alternates")
    git(dir, "init", "-q")
    writeFileSync(join(dir, ".git", "objects", "info", "alternates"), `${join(source, ".git", "objects")}\n`)
    git(dir, "config", "core.alternateRefsCommand", marks.program("alternate-refs"))
    git(source, "commit", "-q", "--allow-empty", "-m", "more")
    await proves(marks, "alternate-refs", dir, ["fetch", "-q", source])
  })

  it("a partial clone's promisor remote, fetching a missing object (git status)", async () => {
    const marks = planted()
    const dir = repo()
    // The repository claims to be a partial clone of a remote whose upload-pack is a planted program, and lacks the
    // tree of HEAD: comparing the index with HEAD makes git fetch it from that remote.
    const tree = git(dir, "rev-parse", "HEAD^{tree}")
    rmSync(join(dir, ".git", "objects", tree.slice(0, 2), tree.slice(2)))
    git(dir, "config", "core.repositoryformatversion", "1")
    git(dir, "config", "extensions.partialClone", "origin")
    git(dir, "config", "remote.origin.url", temp("promisor"))
    git(dir, "config", "remote.origin.promisor", "true")
    git(dir, "config", "remote.origin.uploadpack", marks.program("uploadpack", "exit 1"))
    await proves(marks, "uploadpack", dir, ["--no-optional-locks", "status", "--porcelain"])
  })

  it("gpg.program (git verify-commit of a signed commit)", async () => {
    const marks = planted()
    const dir = repo()
    const tree = git(dir, "write-tree")
    const commit = execFileSync("git", ["hash-object", "-t", "commit", "-w", "--stdin"], {
      cwd: dir,
      encoding: "utf8",
      input:
        `tree ${tree}\nauthor t <t@t> 1 +0000\ncommitter t <t@t> 1 +0000\n` +
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQ\n -----END PGP SIGNATURE-----\n\nsigned\n"
    }).trim()
    git(dir, "config", "gpg.program", marks.program("gpg", "exit 1"))
    await proves(marks, "gpg", dir, ["verify-commit", commit])
  })
})

describe("hardened git: config it reaches", () => {
  it("a filter defined in a file that include.path / includeIf brings in", async () => {
    const marks = planted()
    const dir = repo()
    const included = join(temp("included"), "evil.cfg")
    writeFileSync(included, `[filter "Evil"]\n\tclean = ${marks.program("included-clean", "cat")}\n`)
    git(dir, "config", `includeIf.gitdir:${dir}/.git.path`, included)
    writeFileSync(join(dir, ".gitattributes"), "a.txt filter=Evil\n")
    touchLater(dir)
    await proves(marks, "included-clean", dir, ["add", "a.txt"], { reset: () => touchLater(dir) })
  })

  it("a linked worktree: the commondir's config and its worktree config", async () => {
    const marks = planted()
    const dir = repo()
    const linked = join(temp("worktree"), "wt")
    git(dir, "worktree", "add", "-q", linked)
    git(dir, "config", "extensions.worktreeConfig", "true")
    // The main repository's config, reached through the linked worktree's commondir, and the worktree's own.
    git(dir, "config", "core.fsmonitor", marks.program("common-fsmonitor", "exit 1"))
    git(linked, "config", "--worktree", "filter.wt.clean", marks.program("worktree-clean", "cat"))
    writeFileSync(join(linked, ".gitattributes"), "a.txt filter=wt\n")
    await proves(marks, "common-fsmonitor", linked, ["--no-optional-locks", "status", "--porcelain"])
    touchLater(linked)
    await proves(marks, "worktree-clean", linked, ["add", "a.txt"], { reset: () => touchLater(linked) })
  })

  it("a submodule's own fsmonitor and filter, with --ignore-submodules=all (git status)", async () => {
    const marks = planted()
    const sub = repo("sub")
    writeFileSync(join(sub, ".gitattributes"), "*.txt filter=subf\n")
    git(sub, "add", ".gitattributes")
    git(sub, "commit", "-qm", "attributes")
    const dir = repo("super")
    git(dir, "submodule", "add", "-q", sub, "sub")
    git(dir, "commit", "-qm", "submodule")
    // `.gitmodules` (the repository's) can ask for submodules to be looked into whatever diff.ignoreSubmodules says.
    git(dir, "config", "-f", ".gitmodules", "submodule.sub.ignore", "none")
    git(join(dir, "sub"), "config", "core.fsmonitor", marks.program("sub-fsmonitor", "exit 1"))
    git(join(dir, "sub"), "config", "filter.subf.clean", marks.program("sub-clean", "cat"))
    const status = ["--no-optional-locks", "status", "--porcelain", "--ignore-submodules=all"]
    marks.clear()
    plain(dir, ["--no-optional-locks", "status", "--porcelain"])
    assert.include(marks.seen(), "sub-fsmonitor")
    marks.clear()
    await hardened(dir, status)
    assert.deepStrictEqual(marks.seen(), [])
  })

  it("the start-up prefetch (one shell) answers without running fsmonitor, an included filter or a hook", async () => {
    const marks = planted()
    const dir = repo()
    git(dir, "config", "core.fsmonitor", marks.program("fsmonitor", "exit 1"))
    const included = join(temp("included"), "evil.cfg")
    writeFileSync(included, `[filter "evil"]\n\tclean = ${marks.program("clean", "cat")}\n`)
    git(dir, "config", "include.path", included)
    writeFileSync(join(dir, ".gitattributes"), "a.txt filter=evil\n")
    touchLater(dir, "b\n") // same size: git hashes it (through the filter) to see whether it changed
    plain(dir, startupGitCommands.status)
    assert.sameMembers(marks.seen(), ["fsmonitor", "clean"])
    marks.clear()
    touchLater(dir, "c\n")
    prefetchStartupGit(dir)
    assert.strictEqual(await gitOutput(dir, startupGitCommands.toplevel), dir)
    assert.strictEqual(await gitOutput(dir, startupGitCommands.branch), "main")
    assert.include(await gitOutput(dir, startupGitCommands.status), "a.txt")
    assert.deepStrictEqual(marks.seen(), [])
  })
})

describe("hardened git: what cannot be overridden is refused", () => {
  it("a driver whose name holds '=' makes prepareSafeGit reject and the prefetch answer nothing", async () => {
    const marks = planted()
    const dir = repo()
    writeFileSync(join(dir, ".git", "config"), `\n[filter "a=b"]\n\tclean = ${marks.program("clean", "cat")}\n`, {
      flag: "a"
    })
    writeFileSync(join(dir, ".gitattributes"), "a.txt filter=a=b\n")
    const refused = await prepareSafeGit(dir).then(
      () => undefined,
      (error: unknown) => error
    )
    assert.instanceOf(refused, GitConfigRefused)
    assert.instanceOf(refused, Error)
    assert.strictEqual((refused as GitConfigRefused)._tag, "GitConfigRefused")
    assert.strictEqual((refused as GitConfigRefused).key, "filter.a=b.clean")
    assert.include((refused as GitConfigRefused).message, "filter.a=b.clean")
    touchLater(dir)
    prefetchStartupGit(dir)
    assert.isUndefined(await gitOutput(dir, startupGitCommands.status))
    assert.deepStrictEqual(marks.seen(), [])
  })
})

describe("safeGitOverrides", () => {
  it("switches off program keys from any scope, and remote keys only from the repository's own files", () => {
    const listing = [
      "global\tfilter.lfs.process",
      "global\tfilter.lfs.required",
      "system\tcredential.helper",
      "global\tcore.sshcommand",
      "local\tdiff.x.textconv",
      "worktree\tcredential.https://h.helper"
    ].join("\n")
    assert.deepStrictEqual(safeGitOverrides(listing), [
      "-c",
      "filter.lfs.process=",
      "-c",
      "filter.lfs.required=false",
      "-c",
      "diff.x.textconv=",
      "-c",
      "credential.helper="
    ])
    assert.deepStrictEqual(safeGitOverrides("local\tcore.sshcommand\n"), ["-c", "core.sshCommand=ssh"])
  })

  it("the environment switches off the programs git takes from variables first", () => {
    const env = gitSafeEnv({ PATH: "/bin", GIT_EXTERNAL_DIFF: "x", GIT_DIR: "/d" })
    assert.strictEqual(env.GIT_PAGER, "cat")
    assert.strictEqual(env.GIT_EDITOR, ":")
    assert.strictEqual(env.GIT_ASKPASS, "")
    assert.strictEqual(env.GIT_PROXY_COMMAND, "")
    assert.isUndefined(env.GIT_EXTERNAL_DIFF)
    assert.strictEqual(env.GIT_DIR, "/d")
  })
})
