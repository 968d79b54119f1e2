/**
 * Marks on the way to a run's first model request, for `bench/startup-phases.ts`: with `LATHE_STARTUP_MARKS=1` in the
 * environment, `startupMark(name)` writes `lathe-mark <name> <ms>` on stderr (ms since the process started), and the
 * first HTTP request the process starts is marked `request`. Without it a mark is a test of one constant: nothing is
 * written, subscribed or loaded. The CLI's entry and its run build each carry a copy of this module; both read the
 * same variable (and the first request is watched once).
 */
import { writeSync } from "node:fs"

const enabled = process.env.LATHE_STARTUP_MARKS === "1"

/** Whether marks are on: code that would do work only to mark (wrap a layer) asks first. */
export const startupMarksOn = (): boolean => enabled
/** Set once the first request is watched, by whichever copy of this module marked first. */
const WATCHING = Symbol.for("@lathe/core/startup-marks")

/** Writes the mark `name` when marks are on (see the module's comment). */
export const startupMark = (name: string): void => {
  if (!enabled) return
  writeSync(2, `lathe-mark ${name} ${performance.now().toFixed(2)}\n`)
  const global = globalThis as { [WATCHING]?: true }
  if (global[WATCHING]) return
  global[WATCHING] = true
  const channel = process.getBuiltinModule("node:diagnostics_channel")
  const request = () => {
    channel.unsubscribe("http.client.request.start", request)
    writeSync(2, `lathe-mark request ${performance.now().toFixed(2)}\n`)
  }
  channel.subscribe("http.client.request.start", request)
}
