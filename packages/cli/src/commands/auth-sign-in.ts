/**
 * `lathe auth login` for providers that sign in with an account (`descriptor.signIn`): GitHub Copilot's device code,
 * ChatGPT's browser sign-in with a redirect to a server on localhost. Both end with the credential stored in
 * `auth.json` (0600), which the provider renews during runs.
 */
import { spawn } from "node:child_process"
import { createServer } from "node:http"
import {
  authFile,
  authorizeURL,
  chatgptEndpoints,
  exchangeCode,
  exchangeCopilotToken,
  type ProviderDescriptor,
  pkcePair,
  pollDeviceToken,
  requestDeviceCode,
  type SignInCredential,
  SignInError,
  storeSignIn
} from "@lathe/core/providers"
import type { CliIO } from "../io.js"
import { readVisible } from "./auth-prompts.js"

/** How long the browser sign-in waits for the redirect back. */
const CALLBACK_TIMEOUT_MS = 5 * 60_000

class Cancelled extends Error {}

/** A promise that rejects with {@link Cancelled} on Ctrl-C, and a function that stops listening. */
const interrupted = (io: CliIO) => {
  let stop: (() => void) | undefined
  const promise = new Promise<never>((_resolve, reject) => {
    stop = io.onInterrupt?.(() => reject(new Cancelled()))
  })
  promise.catch(() => undefined)
  return { promise, stop: () => stop?.() }
}

/**
 * Opens `url` in the person's browser: `BROWSER` when set (`none` opens nothing), else the desktop's opener where
 * there is a desktop. Never fails: the URL is printed anyway.
 */
const openBrowser = (url: string, env: CliIO["env"]): void => {
  const chosen = env.BROWSER
  if (chosen === "none") return
  const [command, args] =
    chosen !== undefined && chosen !== ""
      ? [chosen, [url]]
      : process.platform === "darwin"
        ? ["open", [url]]
        : process.platform === "win32"
          ? ["cmd", ["/c", "start", "", url]]
          : env.DISPLAY || env.WAYLAND_DISPLAY
            ? ["xdg-open", [url]]
            : [undefined, []]
  if (command === undefined) return
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true, env: { ...env } as NodeJS.ProcessEnv })
    child.on("error", () => undefined)
    child.unref()
  } catch {}
}

const save = (io: CliIO, id: string, credential: SignInCredential): boolean => {
  try {
    storeSignIn(id, credential, io.env)
    return true
  } catch (error) {
    io.stderr(`lathe auth: ${error instanceof Error ? error.message : String(error)}\n`)
    return false
  }
}

const failed = (io: CliIO, error: unknown): number => {
  if (error instanceof Cancelled) {
    io.stderr("lathe auth: cancelled; nothing stored.\n")
    return 1
  }
  const text = error instanceof SignInError || error instanceof Error ? error.message : String(error)
  io.stderr(`lathe auth: ${text} Nothing stored.\n`)
  return 1
}

/**
 * GitHub's device flow: shows the code and the page to type it at, polls until it is entered, exchanges the GitHub
 * token for a Copilot token (which proves the account has Copilot) and stores both.
 */
export const signInDevice = async (io: CliIO, id: string, descriptor: ProviderDescriptor): Promise<number> => {
  const cancel = interrupted(io)
  try {
    const code = await Promise.race([requestDeviceCode(globalThis.fetch, io.env), cancel.promise])
    io.stdout(
      `To sign in to ${descriptor.name}, open ${code.verificationUri} and enter the code ${code.userCode}\n` +
        `(it is valid for ${Math.round(code.expiresIn / 60)} minutes). Waiting for GitHub…\n`
    )
    const clock = {
      sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
      now: () => Date.now()
    }
    const githubToken = await Promise.race([pollDeviceToken(globalThis.fetch, io.env, code, clock), cancel.promise])
    const credential = await Promise.race([
      exchangeCopilotToken(globalThis.fetch, io.env, githubToken, Date.now()),
      cancel.promise
    ])
    if (!save(io, id, credential)) return 1
    io.stdout(
      `Signed in to ${descriptor.name}; stored in ${authFile(io.env)} (readable by you only).\n` +
        `Use it with -m ${id}/<model> (lathe models ${id} lists them).\n`
    )
    return 0
  } catch (error) {
    return failed(io, error)
  } finally {
    cancel.stop()
  }
}

/**
 * The code from the address a browser ended on, pasted at the terminal (`http://localhost:1455/auth/callback?code=…
 * &state=…`); rejects when it is not that address, or its state is not this sign-in's, or the person cancels.
 */
const pastedCode = async (io: CliIO, state: string, signal: AbortSignal): Promise<string> => {
  const line = await readVisible(
    io,
    "(Browser on another machine? Paste the address it ended on, then Enter.)\n",
    signal
  )
  if (signal.aborted) return new Promise<never>(() => undefined)
  if (line === undefined) throw new Cancelled()
  let url: URL
  try {
    url = new URL(line.trim())
  } catch {
    throw new SignInError("That is not the address the browser ended on (http://localhost:…/auth/callback?code=…).", 0)
  }
  const code = url.searchParams.get("code")
  if (url.searchParams.get("state") !== state || code === null)
    throw new SignInError("The sign-in answer did not match this sign-in (state).", 400)
  return code
}

/** The page the browser shows once it has been sent back. */
const page = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;margin:3em"><h1>${title}</h1><p>${text}</p></body>`

/**
 * ChatGPT's browser sign-in (authorization code with PKCE): a server on localhost waits for the redirect, whose code
 * is exchanged for tokens; the account id comes from the id token. The URL is printed too, for a browser elsewhere.
 */
export const signInBrowser = async (io: CliIO, id: string, descriptor: ProviderDescriptor): Promise<number> => {
  const pkce = await pkcePair()
  const cancel = interrupted(io)
  let settle: { resolve: (code: string) => void; reject: (error: Error) => void } | undefined
  const codeArrived = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject }
  })
  codeArrived.catch(() => undefined)
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost")
    if (url.pathname !== "/auth/callback") {
      res.writeHead(404).end()
      return
    }
    const error = url.searchParams.get("error")
    const code = url.searchParams.get("code")
    if (url.searchParams.get("state") !== pkce.state) {
      res.writeHead(400, { "content-type": "text/html" }).end(page("Sign-in failed", "The answer did not match."))
      settle?.reject(new SignInError("The sign-in answer did not match this sign-in (state).", 400))
      return
    }
    if (error !== null || code === null) {
      res
        .writeHead(400, { "content-type": "text/html" })
        .end(page("Sign-in failed", "ChatGPT did not sign you in. You can close this page."))
      settle?.reject(new SignInError(`ChatGPT did not sign in (${error ?? "no code"}).`, 400, error ?? undefined))
      return
    }
    res
      .writeHead(200, { "content-type": "text/html", connection: "close" })
      .end(page("Signed in to Lathe", "You can close this page and go back to the terminal."))
    settle?.resolve(code)
  })
  try {
    const port = await new Promise<number>((resolve, reject) => {
      server.once("error", (error: NodeJS.ErrnoException) =>
        reject(
          new SignInError(
            error.code === "EADDRINUSE"
              ? `Port ${chatgptEndpoints(io.env).callbackPort} is in use (is another sign-in, or Codex's, running?).`
              : error.message,
            0
          )
        )
      )
      server.listen(chatgptEndpoints(io.env).callbackPort, "127.0.0.1", () => {
        const address = server.address()
        resolve(typeof address === "object" && address !== null ? address.port : 0)
      })
    })
    const redirectUri = `http://localhost:${port}/auth/callback`
    const url = authorizeURL(io.env, redirectUri, pkce)
    io.stdout(
      `To sign in to ${descriptor.name}, open this page (opening your browser):\n${url}\nWaiting for the sign-in…\n`
    )
    openBrowser(url, io.env)
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new SignInError("No sign-in arrived within 5 minutes.", 0)), CALLBACK_TIMEOUT_MS)
    })
    timeout.catch(() => undefined)
    // A browser on another machine cannot reach this one's localhost: the address it ended on can be pasted instead.
    const pasting = new AbortController()
    const pasted = io.stdinIsTTY ? pastedCode(io, pkce.state, pasting.signal) : new Promise<never>(() => undefined)
    const code = await Promise.race([codeArrived, pasted, cancel.promise, timeout]).finally(() => {
      clearTimeout(timer)
      pasting.abort()
    })
    const credential = await Promise.race([
      exchangeCode(globalThis.fetch, io.env, { code, verifier: pkce.verifier, redirectUri }, Date.now()),
      cancel.promise
    ])
    if (!save(io, id, credential)) return 1
    io.stdout(
      `Signed in to ${descriptor.name}${credential.accountId === undefined ? "" : ` (account ${credential.accountId})`}; ` +
        `stored in ${authFile(io.env)} (readable by you only).\nUse it with -m ${id}/<model> (lathe models ${id} lists them).\n`
    )
    return 0
  } catch (error) {
    return failed(io, error)
  } finally {
    cancel.stop()
    server.closeAllConnections()
    server.close()
  }
}
