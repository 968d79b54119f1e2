#!/usr/bin/env node
// Started by the published `lathe` command (bin/lathe beside it, which hands the provider keys over on a descriptor
// and execs Node on this file; run directly, it works as well, keys in the environment as before). Plain JavaScript that any Node still in use can parse (18 and 20 included): it checks
// the Node version first, because the CLI needs `node:sqlite` without a flag (Node 22.13), and on an older Node would
// die with a stack trace instead of saying so. Then it loads the bundle, which reads process.argv as usual.
const needed = [22, 13]
const [major, minor] = process.versions.node.split(".").map(Number)
if (major < needed[0] || (major === needed[0] && minor < needed[1])) {
  process.stderr.write(
    `lathe needs Node.js ${needed.join(".")} or newer; this is Node.js ${process.versions.node} (${process.execPath}). ` +
      "Install a current Node.js from https://nodejs.org (or: nvm install 24), then run lathe again.\n"
  )
  process.exit(1)
}
import("../dist/bundle/lathe.js").catch((error) => {
  process.stderr.write(`lathe: could not load its bundle: ${error?.stack ?? error}\n`)
  process.exit(1)
})
