/**
 * Lathe installed as a user installs it: every public package packed (`scripts/release-check.mjs`, the checks of
 * `npm run release:check` included), the CLI's tarball installed with `npm install -g --prefix <tmp>` under a
 * temporary HOME (the npm cache stays the user's, so no registry is needed when it is warm), then, from a folder
 * outside the repository, the installed `lathe`: its version, the Node it needs (on the machine's older Node, when
 * there is one), `lathe doctor`, a `lathe run` against a scripted model server that reads and edits a file, and
 * `lathe undo`. Packs with the bundle Nx built before this package's tests (`--ignore-scripts`: no second bundle).
 */
import { execFileSync, spawn } from "node:child_process"
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { homedir, tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { childEnv, repo } from "./pack-install-helpers.js"

/** What `packAll` of scripts/release-check.mjs returns per package. */
interface Packed {
  readonly name: string
  readonly version: string
  readonly tarball: string
  readonly root: string
  readonly files: ReadonlyArray<string>
  readonly manifest: Readonly<Record<string, unknown>>
}

/** The functions of scripts/release-check.mjs this test uses. */
interface ReleaseCheck {
  readonly packAll: (dest: string, options?: { readonly ignoreScripts?: boolean }) => ReadonlyArray<Packed>
  readonly checkPacked: (packed: ReadonlyArray<Packed>) => ReadonlyArray<string>
}

const releaseCheck = join(repo, "scripts/release-check.mjs")
const bundle = fileURLToPath(new URL("../dist/bundle/lathe.js", import.meta.url))

/** The Node on the machine's plain PATH when it is older than the CLI's minimum (CI's and this machine's Node 20). */
const oldNode = ["/usr/bin/node", "/usr/local/bin/node"].find((path) => {
  if (!existsSync(path)) return false
  const [major = 0, minor = 0] = execFileSync(path, ["-p", "process.versions.node"], { encoding: "utf8" })
    .trim()
    .split(".")
    .map(Number)
  return major < 22 || (major === 22 && minor < 13)
})

/** Runs a command with exactly `env`, collecting its output; fails after `timeoutMs` with what it printed. */
const exec = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: Record<string, string>; readonly timeoutMs?: number }
): Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`\`${command} ${args.join(" ")}\` timed out.\nstdout:\n${stdout}\nstderr:\n${stderr}`))
    }, options.timeoutMs ?? 30_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** The installed packages under a node_modules folder (scoped ones and nested node_modules included). */
const installedPackages = (nodeModules: string): Array<string> => {
  if (!existsSync(nodeModules)) return []
  const found: Array<string> = []
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith(".")) continue
    const dirs = entry.startsWith("@")
      ? readdirSync(join(nodeModules, entry)).map((name) => join(entry, name))
      : [entry]
    for (const name of dirs) {
      if (!existsSync(join(nodeModules, name, "package.json"))) continue
      found.push(name, ...installedPackages(join(nodeModules, name, "node_modules")))
    }
  }
  return found
}

/** The bytes of the files under a folder. */
const bytesUnder = (dir: string): number =>
  readdirSync(dir, { recursive: true }).reduce<number>((sum, file) => {
    const stat = statSync(join(dir, String(file)), { throwIfNoEntry: false })
    return sum + (stat?.isFile() === true ? stat.size : 0)
  }, 0)

describe("lathe installed with npm install -g from its tarball", () => {
  let dir = ""
  let prefix = ""
  let packed: ReadonlyArray<Packed> = []
  let check: ReleaseCheck | undefined
  let cli: Packed | undefined

  beforeAll(async () => {
    assert.isTrue(existsSync(bundle), `${bundle} is missing: build it with \`npx nx run @lathe/cli:bundle\``)
    check = (await import(releaseCheck)) as ReleaseCheck
    dir = mkdtempSync(join(tmpdir(), "lathe-global-install-"))
    assert.isFalse(realpathSync(dir).startsWith(realpathSync(repo)), `${dir} must be outside the repository`)
    packed = check.packAll(join(dir, "tarballs"), { ignoreScripts: true })
    cli = packed.find((pkg) => pkg.name === "@lathe/cli")
    assert.isDefined(cli, "npm pack made no @lathe/cli tarball")
    prefix = join(dir, "prefix")
    mkdirSync(join(dir, "home"), { recursive: true })
    // A new HOME, but the user's npm cache (npm would otherwise fetch from the registry what is already there).
    const cache = process.env.npm_config_cache ?? join(homedir(), ".npm")
    const install = await exec(
      "npm",
      [
        "install",
        "-g",
        "--prefix",
        prefix,
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--fetch-retries=1",
        "--fetch-timeout=20000",
        cli?.tarball ?? ""
      ],
      {
        cwd: dir,
        env: { ...childEnv(), HOME: join(dir, "home"), npm_config_cache: cache },
        timeoutMs: 90_000
      }
    )
    assert.strictEqual(
      install.code,
      0,
      `npm install -g failed (registry or npm cache?):\n${install.stderr.slice(-3000)}`
    )
  }, 150_000)

  afterAll(() => {
    if (dir !== "") rmSync(dir, { recursive: true, force: true })
  })

  /** The environment of a person who installed Lathe: its bin first on PATH, then this test's Node. */
  const userEnv = (): Record<string, string> => ({
    PATH: [join(prefix, "bin"), dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(delimiter),
    HOME: join(dir, "home"),
    LATHE_DATA_DIR: join(dir, "data"),
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_DATA_HOME: join(dir, "xdg-data")
  })

  it("packs tarballs that pass release:check's checks, and those checks catch a broken one", () => {
    assert.deepStrictEqual(check?.checkPacked(packed), [])
    const core = packed.find((pkg) => pkg.name === "@lathe/core")
    const tools = packed.find((pkg) => pkg.name === "@lathe/tools")
    assert.isDefined(core)
    assert.isDefined(tools)
    if (core === undefined || tools === undefined || cli === undefined || check === undefined) return
    // A copy of core's extracted tarball with a test and a file naming this checkout's folder, and without LICENSE.
    const root = join(dir, "broken-core")
    mkdirSync(join(root, "test"), { recursive: true })
    mkdirSync(join(root, "dist"), { recursive: true })
    writeFileSync(join(root, "package.json"), JSON.stringify(core.manifest))
    writeFileSync(join(root, "README.md"), "# @lathe/core\n")
    writeFileSync(join(root, "test", "loop.test.js"), "")
    writeFileSync(join(root, "dist", "leak.js"), `export const from = ${JSON.stringify(join(repo, "packages/core"))}\n`)
    const broken: ReadonlyArray<Packed> = [
      { ...core, root, files: ["package.json", "README.md", "test/loop.test.js", "dist/leak.js"] },
      {
        ...tools,
        manifest: { ...tools.manifest, dependencies: { "@lathe/core": "*" }, repository: undefined }
      },
      // The shell launcher without the start guard it runs.
      { ...cli, files: cli.files.filter((file) => file !== "bin/lathe.js") }
    ]
    const problems = check.checkPacked(broken).join("\n")
    assert.include(problems, "@lathe/core: the tarball has no LICENSE")
    assert.include(problems, "@lathe/core: the tarball ships tests or build leftovers: test/loop.test.js")
    assert.include(problems, "@lathe/core: dist/leak.js contains a path of this machine")
    assert.include(problems, "@lathe/core: package.json points at dist/index.js, which is not in the tarball")
    assert.include(problems, "@lathe/tools: package.json has no repository")
    assert.include(problems, '@lathe/tools: dependencies has @lathe/core@"*"; it must be the exact version')
    assert.include(problems, "@lathe/cli: ./bin/lathe runs bin/lathe.js, which is not in the tarball")
  })

  it("installs the CLI alone: no @lathe/* package, only what cannot be bundled", () => {
    const nodeModules = join(prefix, "lib", "node_modules")
    const installed = installedPackages(nodeModules).sort()
    const cliDir = join(nodeModules, "@lathe", "cli")
    assert.isFalse(realpathSync(cliDir).startsWith(realpathSync(repo)), "the CLI resolves into the repository")
    assert.deepStrictEqual(
      installed.filter((name) => name.startsWith("@lathe/")),
      ["@lathe/cli"]
    )
    // @vscode/ripgrep (and its binary for this platform) and web-tree-sitter; nothing else.
    assert.isAtMost(installed.length, 5, installed.join(", "))
    const megabytes = bytesUnder(nodeModules) / 1024 / 1024
    assert.isBelow(megabytes, 40, `a global install takes ${megabytes.toFixed(1)} MB`)
    console.log(`global install: ${installed.length} packages (${installed.join(", ")}), ${megabytes.toFixed(1)} MB`)
    // Shipped: the launcher, the start guard and the bundle with the bash grammar and the models catalogue; not
    // shipped: sources, tsc output, tests. The command on PATH is the launcher (it hands the provider keys over on a
    // descriptor), executable.
    assert.includeMembers(
      [...(cli?.files ?? [])],
      [
        "bin/lathe",
        "bin/lathe.js",
        "dist/bundle/lathe.js",
        "dist/bundle/models-catalog.dat",
        "dist/bundle/run/run.cjs",
        // The run build's side files (packages a plain run does not evaluate), required from run.cjs when used.
        "dist/bundle/run/vendor-html-to-text.cjs",
        "dist/bundle/run/vendor-markdown.cjs",
        "dist/bundle/run/vendor-turndown.cjs",
        "dist/bundle/run/vendor-yaml.cjs",
        "dist/bundle/tree-sitter-bash.wasm",
        "LICENSE",
        "README.md"
      ]
    )
    assert.deepStrictEqual(
      (cli?.files ?? []).filter((file) => !/^(bin\/|dist\/bundle\/|LICENSE$|README\.md$|package\.json$)/.test(file)),
      []
    )
    // A code cache a warm-up or the speed guard wrote beside this checkout's bundle is this machine's: never packed.
    assert.deepStrictEqual(
      (cli?.files ?? []).filter((file) => file.includes("code-cache")),
      []
    )
    assert.strictEqual(realpathSync(join(prefix, "bin", "lathe")), realpathSync(join(cliDir, "bin", "lathe")))
    assert.notStrictEqual(statSync(join(cliDir, "bin", "lathe")).mode & 0o111, 0, "bin/lathe is executable")
  })

  it.skipIf(oldNode === undefined)("on a Node older than 22.13, says in one line which Node it needs", async () => {
    const env = {
      ...userEnv(),
      PATH: [join(prefix, "bin"), dirname(oldNode ?? ""), "/usr/bin", "/bin"].join(delimiter)
    }
    const run = await exec(join(prefix, "bin", "lathe"), ["--version"], { cwd: dir, env })
    assert.strictEqual(run.code, 1)
    assert.strictEqual(run.stdout, "")
    assert.match(
      run.stderr,
      /^lathe needs Node\.js 22\.13 or newer; this is Node\.js \d+\.\d+\.\d+ .*https:\/\/nodejs\.org.*\n$/
    )
  })

  it("from a folder outside the repository: --version, doctor, a run that reads and edits a file, undo", async () => {
    const project = join(dir, "project")
    mkdirSync(project)
    writeFileSync(join(project, "notes.txt"), "alpha\n")
    let posts = 0
    const server: ScriptedServer = await startScriptedServer((request) => {
      // lathe doctor's free GET /models.
      if (request.method === "GET") return { type: "error", status: 200, body: { data: [{ id: "m" }] } }
      if (JSON.stringify(request.body).includes("Write a title")) return { steps: [{ text: "A title" }] }
      posts += 1
      if (posts === 1) return { steps: [{ tool: "read", input: { filePath: "notes.txt" } }] }
      if (posts === 2)
        return { steps: [{ tool: "edit", input: { filePath: "notes.txt", oldString: "alpha", newString: "beta" } }] }
      // A shell command: the installed CLI parses it with the bash grammar shipped beside its bundle.
      if (posts === 3)
        return { steps: [{ tool: "bash", input: { command: "echo shell-says-$((6 * 7))", description: "echo" } }] }
      return { steps: [{ text: "Changed alpha to beta." }] }
    })
    try {
      // The key goes through the installed launcher (on a descriptor, not in Lathe's environment) to the server.
      const env = { ...userEnv(), LATHE_BASE_URL: server.url, LATHE_MODEL: "m", LATHE_API_KEY: "sk-global-install-e2e" }
      const lathe = (...args: Array<string>) => exec("lathe", args, { cwd: project, env, timeoutMs: 60_000 })

      const version = await lathe("--version")
      assert.strictEqual(version.code, 0, version.stderr)
      // Installed from a tarball there is no checkout, so no commit: just the package's version.
      assert.strictEqual(version.stdout, `${cli?.version}\n`)

      const doctor = await lathe("doctor")
      assert.strictEqual(doctor.code, 0, `${doctor.stdout}\n${doctor.stderr}`)
      assert.match(doctor.stdout, /ripgrep/i)

      // npm ran the package's postinstall (bin/warm-cache.js): a code cache beside the run build, readable by all, so
      // this first run starts warm and keeps no cache of its own.
      const installedCaches = join(
        prefix,
        "lib",
        "node_modules",
        "@lathe",
        "cli",
        "dist",
        "bundle",
        "run",
        "code-cache"
      )
      const cached = existsSync(installedCaches) ? readdirSync(installedCaches) : []
      assert.strictEqual(cached.length, 1, `the install's code cache: ${cached.join(", ")}`)
      assert.match(cached[0] ?? "", /^run\.cjs-.*\.v8cache$/)
      assert.strictEqual(statSync(join(installedCaches, cached[0] ?? "")).mode & 0o777, 0o644)
      const run = await lathe("run", "--format", "json", "--yes", "change alpha to beta in notes.txt")
      assert.strictEqual(run.code, 0, run.stderr)
      const ownCaches = join(dir, "home", ".cache", "lathe", "code-cache")
      assert.deepStrictEqual(existsSync(ownCaches) ? readdirSync(ownCaches) : [], [])
      assert.strictEqual(readFileSync(join(project, "notes.txt"), "utf8"), "beta\n")
      const bodies = server.requests
        .map((request) => JSON.stringify(request.body))
        .filter((body) => body.includes("change alpha to beta"))
      assert.include(bodies[1], "1\\talpha", "the read's output reached the model")
      assert.include(bodies.at(-1), "shell-says-42", "the shell command ran and its output reached the model")
      const posted = server.requests.filter((request) => request.method === "POST")
      for (const request of posted) assert.strictEqual(request.headers.authorization, "Bearer sk-global-install-e2e")

      const undo = await lathe("undo")
      assert.strictEqual(undo.code, 0, `${undo.stdout}\n${undo.stderr}`)
      assert.strictEqual(readFileSync(join(project, "notes.txt"), "utf8"), "alpha\n")
    } finally {
      await server.close()
    }
  }, 180_000)
})
