/**
 * @lathe/plugin/process: the one way Lathe starts a program and waits for it: no shell, its own process group, a time
 * limit after which the whole group gets SIGTERM and then SIGKILL, an abort signal that does the same, and capped
 * output. Plain promises and Node only (no effect, no zod): the host's start-up git commands load it before anything
 * else of a run. The environment is always the caller's choice (scrub it with `scrubEnv`). Lathe's host and the
 * built-in tools (bash) start their programs with it; a plugin's own programs are better started with `ctx.run` (the
 * host's sandbox) or `runProgram`.
 */
import { spawn } from "node:child_process"

/** How long a program may run when the caller gives no time limit: 2 minutes. */
export const DEFAULT_RUN_TIMEOUT_MS = 2 * 60 * 1000
/** Output kept per stream when the caller gives no cap: 4 MiB. */
export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024
/** Between SIGTERM to the process group and SIGKILL, when the caller gives no grace. */
const DEFAULT_KILL_GRACE_MS = 200

/** How to run one program with {@link runProcess}. */
export interface RunProcessOptions {
  /** The program: a name looked up on the environment's PATH, or a path. */
  readonly file: string
  readonly args?: ReadonlyArray<string>
  /** The working directory (default: this process's). */
  readonly cwd?: string
  /** Exactly the environment it gets: nothing is added (default: this process's, as it is). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** The group is stopped after this long (default {@link DEFAULT_RUN_TIMEOUT_MS}; `Infinity`: no limit). */
  readonly timeoutMs?: number
  /** Stops the group when aborted (an aborted signal stops it at once). */
  readonly signal?: AbortSignal
  /** Written to stdin, which is then closed (default: stdin closed at once). */
  readonly input?: string | Uint8Array
  /**
   * Each written to a pipe of its own, at file descriptors 3, 4, … of the program, which is then closed (e.g. the
   * seccomp filter bubblewrap reads from `--seccomp 3`). Nothing is written to a disk.
   */
  readonly extraInputs?: ReadonlyArray<Uint8Array>
  /**
   * Opens a Node IPC channel to the program (the descriptor after `extraInputs`, named in its `NODE_CHANNEL_FD`, which
   * a sandbox passes on to a Node program inside) and hands each message, with the socket it carries if any, here.
   */
  readonly onMessage?: (message: unknown, handle: unknown) => void
  /** Bytes kept per stream; the rest is dropped and `truncated` set (default {@link DEFAULT_MAX_OUTPUT_BYTES}). */
  readonly maxOutputBytes?: number
  /** Between SIGTERM and SIGKILL when stopping the group (default 200 ms; 0 sends SIGKILL at once). */
  readonly killGraceMs?: number
  /**
   * After the program exits, how long to wait for programs it left in the background to let go of its output
   * (default: until they do, or the time limit). They keep running; only their hold on the output ends.
   */
  readonly drainMs?: number
  /** Kill the group when this process exits (it is in a group of its own, so a Ctrl-C no longer reaches it). */
  readonly killOnExit?: boolean
  /** Each chunk of output as it arrives, decoded as UTF-8 per stream (a character split across chunks stays whole). */
  readonly onOutput?: (text: string, stream: "stdout" | "stderr") => void
  /** Called once the program has started, with its pid (the id of its process group too). */
  readonly onStart?: (pid: number) => void
}

/** How a program run by {@link runProcess} ended. */
export interface ProcessResult {
  /** The exit code; null when a signal ended it. */
  readonly exitCode: number | null
  /** The signal that ended it, if one did. */
  readonly signal: NodeJS.Signals | null
  readonly stdout: Buffer
  readonly stderr: Buffer
  /** It outlived its time limit and its group was stopped. */
  readonly timedOut: boolean
  /** The caller's signal stopped it. */
  readonly aborted: boolean
  /** Output past `maxOutputBytes` was dropped. */
  readonly truncated: boolean
}

/** Signals a whole process group; one that is gone already is fine. */
export const killProcessGroup = (pid: number | undefined, signal: NodeJS.Signals): void => {
  if (pid === undefined) return
  try {
    process.kill(-pid, signal)
  } catch {
    // ESRCH: the group has exited.
  }
}

/** Groups to kill when this process exits; one listener for all of them. */
const killedOnExit = new Set<number>()
const killAllOnExit = () => {
  for (const pid of killedOnExit) killProcessGroup(pid, "SIGKILL")
}

/**
 * Runs `file args` (no shell) in a process group of its own with exactly `env` and resolves when it has exited and
 * its output is drained. At the time limit or on abort the whole group (the program and everything it started) gets
 * SIGTERM, then SIGKILL after the grace. A failing program is a result (see `exitCode`); the promise rejects only when
 * the program cannot be started (not found, not executable, bad cwd).
 */
export const runProcess = (options: RunProcessOptions): Promise<ProcessResult> =>
  new Promise((resolve, reject) => {
    const cap = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES
    const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS
    const child = spawn(options.file, [...(options.args ?? [])], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: [
        options.input === undefined ? "ignore" : "pipe",
        "pipe",
        "pipe",
        ...(options.extraInputs ?? []).map(() => "pipe" as const),
        ...(options.onMessage ? ["ipc" as const] : [])
      ],
      windowsHide: true
    })
    const pid = child.pid
    const kept = { stdout: [] as Array<Buffer>, stderr: [] as Array<Buffer> }
    const sizes = { stdout: 0, stderr: 0 }
    let truncated = false
    let timedOut = false
    let aborted = false
    const collect = (stream: "stdout" | "stderr") => {
      const decoder = options.onOutput ? new TextDecoder() : undefined
      return (chunk: Buffer) => {
        const text = decoder?.decode(chunk, { stream: true })
        if (text) options.onOutput?.(text, stream)
        const room = cap - sizes[stream]
        if (chunk.length > room) truncated = true
        const part = chunk.length > room ? chunk.subarray(0, Math.max(0, room)) : chunk
        if (part.length === 0) return
        kept[stream].push(part)
        sizes[stream] += part.length
      }
    }
    child.stdout?.on("data", collect("stdout"))
    child.stderr?.on("data", collect("stderr"))
    if (options.onMessage) child.on("message", options.onMessage)
    child.stdin?.on("error", () => undefined) // a program that exits without reading its input
    child.stdin?.end(options.input)
    for (const [index, bytes] of (options.extraInputs ?? []).entries()) {
      const pipe = child.stdio[index + 3]
      if (!pipe || !("end" in pipe)) continue
      pipe.on("error", () => undefined) // a program that exits without reading it
      pipe.end(bytes)
    }

    let killTimer: NodeJS.Timeout | undefined
    let stopping = false
    const stop = () => {
      if (stopping) return
      stopping = true
      if (grace <= 0) return killProcessGroup(pid, "SIGKILL")
      killProcessGroup(pid, "SIGTERM")
      killTimer = setTimeout(() => killProcessGroup(pid, "SIGKILL"), grace)
    }
    const limit = options.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS
    const timer = Number.isFinite(limit)
      ? setTimeout(() => {
          timedOut = true
          stop()
        }, limit)
      : undefined
    const onAbort = () => {
      aborted = true
      stop()
    }
    if (options.signal?.aborted) onAbort()
    else options.signal?.addEventListener("abort", onAbort, { once: true })
    if (options.killOnExit && pid !== undefined) {
      if (killedOnExit.size === 0) process.on("exit", killAllOnExit)
      killedOnExit.add(pid)
    }
    const release = () => {
      clearTimeout(timer)
      if (killTimer) clearTimeout(killTimer)
      options.signal?.removeEventListener("abort", onAbort)
      if (pid !== undefined && killedOnExit.delete(pid) && killedOnExit.size === 0) process.off("exit", killAllOnExit)
    }

    let exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined
    let settled = false
    const finish = () => {
      if (settled || exit === undefined) return
      settled = true
      // Stopped: whatever outlived SIGTERM goes now. (A program that ended by itself keeps its background children.)
      if (timedOut || aborted) killProcessGroup(pid, "SIGKILL")
      release()
      child.stdout?.destroy()
      child.stderr?.destroy()
      resolve({
        exitCode: exit.code,
        signal: exit.signal,
        stdout: Buffer.concat(kept.stdout),
        stderr: Buffer.concat(kept.stderr),
        timedOut,
        aborted,
        truncated
      })
    }
    child.on("error", (error) => {
      if (settled) return
      settled = true
      release()
      reject(error)
    })
    child.on("exit", (code, signal) => {
      exit = { code, signal }
      if (options.drainMs !== undefined) setTimeout(finish, options.drainMs)
    })
    child.on("close", (code, signal) => {
      exit ??= { code, signal }
      finish()
    })
    if (pid !== undefined) options.onStart?.(pid)
  })
