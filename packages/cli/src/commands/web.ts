import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { defineCommand, parseCommand } from "../command-kit.js"
import type { Command } from "../io.js"
import { serveCommand } from "./serve.js"

/** `lathe web`, declared once for the command kit. */
export const webSpec = defineCommand({
  name: "web",
  usage: ["[--port N] [--open]"],
  description: `Runs \`lathe serve\` with a web app at / (loopback only): this project's sessions, each as a timeline of
its prompts, text, tool calls with their output, a chart per step of time and tokens with the cost, the session's
diff, and its open permission asks and questions to answer; live while a turn runs. The first line on stdout is
\`listening on http://HOST:PORT\`, the second \`open <url>\`: that URL carries the token once (after #, so it
reaches no server); the page keeps it in the tab and takes it out of the address bar. A page without the right
token shows only a form that asks for it. Same walls as \`lathe serve\` (Host, Origin, token, body size). See
docs/web.md.`,
  options: {
    port: { type: "string", value: "<n>", description: "The port (default 4096; 0 picks a free one)" },
    open: { type: "boolean", description: "Open the page in the default browser" }
  },
  footer: "Exit codes: 0 stopped cleanly, 1 failed, 2 bad usage."
})

/**
 * The app's folder: beside the bundle's chunks when bundled (`dist/bundle/web/`), else the @lathe/web build of
 * this checkout (running from source).
 */
const appFolder = (): string | undefined =>
  [new URL("./web/", import.meta.url), new URL("../../../web/dist/app/", import.meta.url)]
    .map((url) => fileURLToPath(url))
    .find((dir) => existsSync(`${dir}index.html`))

/** Opens `url` with the desktop's opener; a machine without one just has the printed URL. */
const openBrowser = (url: string): void => {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]]
  const child = spawn(command, args, { stdio: "ignore", detached: true })
  child.on("error", () => undefined)
  child.unref()
}

/** `lathe web`: `lathe serve` plus the web app, until SIGTERM or Ctrl-C. */
export const webCommand =
  (version: string): Command =>
  async (args, io) => {
    const parsed = parseCommand(webSpec, args, io)
    if (typeof parsed === "number") return parsed
    const app = appFolder()
    if (app === undefined) {
      io.stderr("lathe web: the web app's files are missing from this install (build @lathe/web, then the CLI).\n")
      return 1
    }
    const { values } = parsed
    const open = values.open === true ? openBrowser : () => {}
    return serveCommand(version, { app, open })(["--port", values.port ?? "4096"], io)
  }
