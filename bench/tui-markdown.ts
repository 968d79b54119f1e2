/**
 * Rendering a 4,000-character mixed markdown answer for the terminal at width 80, as the interactive UI does on
 * every streamed delta: `renderMarkdown` with colours on and off, against marked's own HTML rendering of the same
 * text in the same run (the baseline: lexing plus the cheapest possible output). "Streaming" renders every prefix
 * that grows by 20 characters, as a streamed answer does (earlier code blocks then hit the highlight cache, the
 * growing one does not); the whole-document lines re-render the same text (every code block cached).
 *
 *   npx tsx --conditions=@lathe/source bench/tui-markdown.ts
 */

import { marked } from "marked"
import { createStyle } from "../packages/cli/src/style.js"
import { renderMarkdown } from "../packages/cli/src/tui/markdown.js"

const section = (n: number) => `## Step ${n}: change the parser

The **parser** reads the *whole* file before it emits anything, which is why \`parse()\` is slow on large inputs;
see [the design notes](https://example.com/design#parser) and ~~the old approach~~ for context. Wide text: 中文 🎉.

1. Read the tokens lazily with a generator, so that the first event leaves as soon as the header is known
2. Keep the buffer bounded
   - flush at 64 KiB
   - [x] measured on the corpus
   - [ ] documented

> The tokenizer must not allocate per character; reuse one buffer and slice it at the end.

\`\`\`ts
export function* tokens(input: string): Generator<Token> {
  let start = 0 // where the current token began
  for (let i = 0; i < input.length; i++) if (input[i] === "\\n") yield { kind: "line", text: input.slice(start, i) }
}
\`\`\`

| file | lines | change |
|:-----|------:|:------:|
| parser.ts | 120 | rewritten |
| lexer.ts | 48 | new |
`

let doc = ""
for (let n = 1; doc.length < 4_000; n++) doc += `${section(n)}\n`
doc = doc.slice(0, 4_000)

/** Average ms per call of `run` (divided by `per` renders per call), printed with its ratio to `baseMs`. */
const time = (name: string, run: () => unknown, baseMs?: number, per = 1): number => {
  for (let i = 0; i < Math.max(3, 50 / per); i++) run()
  const rounds = Math.max(20, Math.round(300 / per))
  const start = performance.now()
  for (let i = 0; i < rounds; i++) run()
  const ms = (performance.now() - start) / rounds / per
  const ratio = baseMs === undefined ? "baseline" : `${(ms / baseMs).toFixed(2)}× baseline`
  process.stdout.write(`${name.padEnd(50)} ${ms.toFixed(3)} ms/render  (${ratio})\n`)
  return ms
}

process.stdout.write(`document: ${doc.length} characters, width 80\n`)
const base = time("marked.parse (HTML), baseline", () => marked.parse(doc, { async: false }))
const color = createStyle(true)
const plain = createStyle(false)
time("renderMarkdown, colours on", () => renderMarkdown(doc, 80, color), base)
time("renderMarkdown, colours off", () => renderMarkdown(doc, 80, plain), base)
time("renderMarkdown, colours on, width 40", () => renderMarkdown(doc, 40, color), base)

const prefixes = Array.from({ length: Math.ceil(doc.length / 20) }, (_, i) => doc.slice(0, (i + 1) * 20))
const streamBase = time(
  "streaming: marked.parse per prefix, baseline",
  () => {
    for (const p of prefixes) marked.parse(p, { async: false })
  },
  undefined,
  prefixes.length
)
time(
  "streaming: renderMarkdown per prefix, colours on",
  () => {
    for (const p of prefixes) renderMarkdown(p, 80, color)
  },
  streamBase,
  prefixes.length
)
