import { readFileSync } from "node:fs"
import { renderMarkdown } from "./src/tui/markdown.js"
import { createStyle } from "./src/tui/style.js"
const md = readFileSync("/tmp/tui-sample.md", "utf8")
for (const color of [false, true]) for (const line of renderMarkdown(md, Number(process.argv[2] ?? 60), createStyle(color))) console.log(JSON.stringify(line))
