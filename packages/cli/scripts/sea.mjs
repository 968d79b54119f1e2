// node scripts/sea.mjs [OUT]   A single-file `lathe` for this platform (default dist/sea/lathe) with Node's single
// executable applications support: the Node running this script (the one scripts/use-node.sh fetched from the npm
// registry), with the bundle (dist/bundle/, build it first) and the packages it loads from disk (@vscode/ripgrep with
// this platform's binary, web-tree-sitter) embedded as assets. At its first start the executable writes them to
// ~/.cache/lathe/sea/<version>-<hash>/ (XDG_CACHE_HOME respected) and runs the bundle from there, so it needs no Node and no
// npm. Injecting the blob uses postject (`npx postject`, fetched from the npm registry at build time).
// Experimental: not published; `process.execPath` is the executable, not a Node.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const cli = join(dirname(fileURLToPath(import.meta.url)), "..")
const version = JSON.parse(readFileSync(join(cli, "package.json"), "utf8")).version
const out = resolve(process.argv[2] ?? join(cli, "dist/sea/lathe"))
const work = join(dirname(out), "sea-build")
rmSync(work, { recursive: true, force: true })
mkdirSync(work, { recursive: true })

/** Every file under `dir`, as [asset key, file path], the key being `prefix` + the path inside `dir`. */
const filesUnder = (dir, prefix) =>
  readdirSync(dir, { recursive: true })
    .map(String)
    .filter((file) => statSync(join(dir, file)).isFile())
    .map((file) => [`${prefix}/${file}`, join(dir, file)])

const require = createRequire(join(cli, "package.json"))
/** The folder of an installed package (found from its node_modules path: not every package exports package.json). */
const packageDir = (name, from = require) => {
  for (const dir of from.resolve.paths(name) ?? []) {
    const candidate = join(dir, name)
    if (statSync(join(candidate, "package.json"), { throwIfNoEntry: false })?.isFile()) return candidate
  }
  throw new Error(`${name} is not installed; run npm install`)
}
const ripgrep = packageDir("@vscode/ripgrep")
const ripgrepBinary = packageDir(
  `@vscode/ripgrep-${process.platform}-${process.arch}`,
  createRequire(join(ripgrep, "package.json"))
)
const assets = Object.fromEntries([
  ...filesUnder(join(cli, "dist/bundle"), "dist/bundle"),
  ...filesUnder(ripgrep, "node_modules/@vscode/ripgrep"),
  ...filesUnder(ripgrepBinary, `node_modules/@vscode/ripgrep-${process.platform}-${process.arch}`),
  ...filesUnder(packageDir("web-tree-sitter"), "node_modules/web-tree-sitter").filter(
    ([key]) => !/\.(map|d\.ts|d\.cts)$/.test(key) && !key.includes("/debug/")
  ),
  ["package.json", join(cli, "package.json")]
])
// The cache folder is named by the version and a hash of what is embedded: a rebuilt executable never runs stale files.
const hash = createHash("sha256")
for (const [key, file] of Object.entries(assets).sort()) hash.update(key).update(readFileSync(file))
const stamp = `${version}-${hash.digest("hex").slice(0, 12)}`
writeFileSync(
  join(work, "main.cjs"),
  `const sea = require("node:sea")
const fs = require("node:fs")
const os = require("node:os")
const path = require("node:path")
const { createRequire } = require("node:module")
const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache")
const root = path.join(base, "lathe", "sea", ${JSON.stringify(stamp)})
const done = path.join(root, ".complete")
if (!fs.existsSync(done)) {
  const temp = root + ".tmp-" + process.pid
  for (const key of sea.getAssetKeys()) {
    const file = path.join(temp, key)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, new Uint8Array(sea.getRawAsset(key)))
    if (key.endsWith("/bin/rg")) fs.chmodSync(file, 0o755)
  }
  fs.writeFileSync(path.join(temp, "start.cjs"), 'module.exports = () => import("./dist/bundle/lathe.js")\\n')
  fs.writeFileSync(path.join(temp, ".complete"), "")
  fs.rmSync(root, { recursive: true, force: true })
  try { fs.renameSync(temp, root) } catch { fs.rmSync(temp, { recursive: true, force: true }) }
}
// A module loaded from disk (not this embedded script) can import() the ES module bundle.
createRequire(path.join(root, "start.cjs"))("./start.cjs")().catch((error) => {
  process.stderr.write("lathe: " + (error && error.stack ? error.stack : error) + "\\n")
  process.exit(1)
})
`
)
writeFileSync(
  join(work, "sea-config.json"),
  JSON.stringify({
    main: join(work, "main.cjs"),
    output: join(work, "sea.blob"),
    disableExperimentalSEAWarning: true,
    useCodeCache: false,
    assets
  })
)
execFileSync(process.execPath, ["--experimental-sea-config", join(work, "sea-config.json")], { stdio: "inherit" })
// The sentinel postject flips, as this Node binary spells it (the first match; a second one is the "already set" mark).
const fuse = /NODE_SEA_FUSE_[0-9a-f]{32}/.exec(readFileSync(process.execPath).toString("latin1"))?.[0]
if (fuse === undefined) throw new Error(`${process.execPath} has no single executable application fuse`)
mkdirSync(dirname(out), { recursive: true })
copyFileSync(process.execPath, out)
chmodSync(out, 0o755)
execFileSync(
  "npx",
  ["--yes", "postject@1.0.0-alpha.6", out, "NODE_SEA_BLOB", join(work, "sea.blob"), "--sentinel-fuse", fuse],
  { stdio: "inherit" }
)
rmSync(work, { recursive: true, force: true })
process.stderr.write(
  `sea: ${relative(process.cwd(), out)}, ${(statSync(out).size / 1024 / 1024).toFixed(1)} MB (${Object.keys(assets).length} files embedded)\n`
)
