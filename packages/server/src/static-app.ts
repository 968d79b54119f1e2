import { readdir, readFile } from "node:fs/promises"
import type { ServerResponse } from "node:http"
import { extname, join } from "node:path"

/** One file of the web app, read once at start: the app is a few small files and never changes while serving. */
interface StaticFile {
  readonly type: string
  readonly body: Buffer
}

/** The prebuilt web app `lathe web` serves at `/`: its files by URL path (`/` is `index.html`). */
export interface StaticApp {
  /** The file for a GET of `pathname`, or undefined when the app has none (the API's routes then answer). */
  readonly get: (pathname: string) => StaticFile | undefined
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".txt": "text/plain; charset=utf-8"
}

/**
 * Reads the app's folder (flat: the build writes `index.html`, `app.js`, `app.css`). Only files of known types are
 * served; anything else in the folder stays private.
 */
export const loadStaticApp = async (directory: string): Promise<StaticApp> => {
  const files = new Map<string, StaticFile>()
  for (const name of await readdir(directory)) {
    const type = TYPES[extname(name)]
    if (type === undefined) continue
    files.set(`/${name}`, { type, body: await readFile(join(directory, name)) })
  }
  const index = files.get("/index.html")
  if (index === undefined) throw new Error(`The web app in ${directory} has no index.html; build @lathe/web first.`)
  files.set("/", index)
  return { get: (pathname) => files.get(pathname) }
}

/**
 * The page may load only its own files and talk only to this server: nothing from the internet, no framing by
 * other sites (a page of another origin cannot overlay buttons on it). uPlot sizes its elements with style
 * attributes, hence `'unsafe-inline'` for styles only; no inline script runs.
 */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

/** Sends one of the app's files (no token needed: the files hold no data; every API call the page makes needs one). */
export const writeStatic = (res: ServerResponse, file: StaticFile, head: boolean): void => {
  res.writeHead(200, {
    "content-type": file.type,
    "content-length": file.body.length,
    "cache-control": "no-store",
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer"
  })
  res.end(head ? undefined : file.body)
}
