#!/usr/bin/env node
// Builds the web app of `lathe web` into dist/app: index.html, app.js and app.css, everything bundled (Preact,
// uPlot, the app), nothing fetched at run time. The CLI's bundle copies the folder beside itself; `lathe serve`
// reads it only when started as `lathe web`. Prints the bytes shipped.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const out = join(root, "dist", "app")
rmSync(out, { recursive: true, force: true })
await build({
  entryPoints: { app: join(root, "src", "main.tsx") },
  outdir: out,
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  logLevel: "warning"
})
writeFileSync(
  join(out, "index.html"),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Lathe</title>
<link rel="stylesheet" href="/app.css">
<script type="module" src="/app.js"></script>
</head>
<body><div id="root"></div></body>
</html>
`
)
// The bundled libraries' licences travel with the files (both MIT: the notice must be kept).
const require = createRequire(import.meta.url)
writeFileSync(
  join(out, "LICENSES.txt"),
  ["preact", "uplot"]
    .map(
      (name) => `${name}:\n\n${readFileSync(join(dirname(require.resolve(`${name}/package.json`)), "LICENSE"), "utf8")}`
    )
    .join("\n\n")
)
const bytes = readdirSync(out).reduce((sum, name) => sum + statSync(join(out, name)).size, 0)
process.stderr.write(`web: ${readdirSync(out).length} files, ${bytes} bytes in ${out}\n`)
