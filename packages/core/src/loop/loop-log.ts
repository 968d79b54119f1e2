import type { LatheEvent } from "@lathe/plugin/schema"
import { Effect, Layer, Logger, References } from "effect"
import { Bus } from "../contracts/bus.js"
import { jsonLogger, type LogSettings, minimumLevel } from "./log-file.js"

/**
 * The loop's log: one line per step (start at debug; finish with its tokens, cost, duration and time to first text),
 * per tool call (start at debug; end with its id, name, status and duration), per retry (with its wait) and per
 * compaction. Read from the events as they are published, in the publisher's fiber (so a line is written before the
 * process can end, and its timings are the loop's own), through effect's `Logger` with {@link jsonLogger} only.
 */

interface StepClock {
  readonly step: number
  readonly start: number
  firstText?: number
}

/** A function from events to log effects; holds the open steps' clocks. */
const makeEventLog = (now: () => number) => {
  const steps = new Map<string, StepClock>()
  // A running call is announced again each time its title or progress changes: its start is logged once.
  const running = new Set<string>()
  return (event: LatheEvent): Effect.Effect<void> | undefined => {
    switch (event.type) {
      case "step.started":
        steps.set(event.sessionID, { step: event.step, start: now() })
        return Effect.logDebug("step.start", {
          sessionID: event.sessionID,
          messageID: event.messageID,
          step: event.step
        })
      case "part.delta": {
        const clock = steps.get(event.sessionID)
        if (clock !== undefined && clock.firstText === undefined) clock.firstText = now()
        return undefined
      }
      case "step.finished": {
        const clock = steps.get(event.sessionID)
        steps.delete(event.sessionID)
        const at = now()
        return Effect.logInfo("step.finish", {
          sessionID: event.sessionID,
          messageID: event.messageID,
          step: event.step,
          reason: event.reason,
          tokens: event.tokens,
          cost: event.cost,
          ...(clock === undefined ? {} : { durationMs: at - clock.start }),
          ...(clock?.firstText === undefined ? {} : { firstTextMs: clock.firstText - clock.start })
        })
      }
      case "tool.running":
        if (running.has(event.callID)) return undefined
        running.add(event.callID)
        return Effect.logDebug("tool.start", {
          sessionID: event.sessionID,
          messageID: event.messageID,
          callID: event.callID,
          tool: event.tool
        })
      case "tool.completed":
      case "tool.error": {
        running.delete(event.callID)
        const { state } = event
        const time = state.status === "completed" || state.status === "error" ? state.time : undefined
        return Effect.logInfo("tool.finish", {
          sessionID: event.sessionID,
          messageID: event.messageID,
          callID: event.callID,
          tool: event.tool,
          status: state.status,
          ...(time === undefined ? {} : { durationMs: time.end - time.start }),
          ...(state.status === "error" ? { error: state.error.slice(0, 500) } : {})
        })
      }
      case "session.status":
        if (event.status.type !== "retry") return undefined
        return Effect.logInfo("retry", {
          sessionID: event.sessionID,
          attempt: event.status.attempt,
          waitMs: Math.max(0, event.status.next - now()),
          reason: event.status.message
        })
      case "session.compacted":
        return Effect.logInfo("compaction", { sessionID: event.sessionID, messageID: event.messageID })
      case "session.error":
        return Effect.logInfo("session.error", { sessionID: event.sessionID, error: event.error })
      case "permission.asked":
        return Effect.logDebug("permission.ask", {
          sessionID: event.sessionID,
          id: event.id,
          permission: event.permission,
          ...(event.callID === undefined ? {} : { callID: event.callID })
        })
      case "permission.replied":
        return Effect.logDebug("permission.reply", { sessionID: event.sessionID, id: event.id, reply: event.reply })
      case "notice":
        return Effect.logDebug("notice", { notice: event.level, text: event.message })
      default:
        return undefined
    }
  }
}

/**
 * A Bus that also logs the loop's events (see above) before publishing them, over the Bus `inner` builds. Used only
 * when logging is on: without it the Bus is the plain one and a step pays nothing for logging.
 */
export const loggingBus = <E, R>(inner: Layer.Layer<Bus, E, R>, settings: LogSettings): Layer.Layer<Bus, E, R> =>
  Layer.effect(
    Bus,
    Effect.map(Bus, (bus) => {
      const loggers = new Set([jsonLogger(settings)])
      const minimum = minimumLevel(settings.level)
      const log = makeEventLog(Date.now)
      return Bus.of({
        ...bus,
        publish: (event) => {
          const line = log(event)
          if (line === undefined) return bus.publish(event)
          return line.pipe(
            Effect.provideService(Logger.CurrentLoggers, loggers),
            Effect.provideService(References.MinimumLogLevel, minimum),
            Effect.andThen(bus.publish(event))
          )
        }
      })
    })
  ).pipe(Layer.provide(inner))
