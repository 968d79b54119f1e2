import { Cause } from "effect"

/**
 * The text a person sees for a log line (on stderr, in the interactive session's notes): its sentences, an error's
 * message, a failure's first error, joined by ": ". Structured fields (a plain object such as the `{ paths: [...] }` a
 * plugin's `log.warn(text, data)` passes along) are left out: they are for log files, the sentence already says what
 * they hold, and raw JSON at the end of a warning reads like a bug.
 */
export const logText = (message: unknown): string =>
  (Array.isArray(message) ? message : [message])
    .flatMap((part) => {
      const text = partText(part)
      return text === undefined || text === "" ? [] : [text]
    })
    .join(": ")

const partText = (part: unknown): string | undefined => {
  if (typeof part === "string") return part
  if (part === null || part === undefined) return undefined
  if (Cause.isCause(part)) return partText(Cause.squash(part))
  if (typeof part !== "object") return String(part)
  if ("message" in part && typeof part.message === "string" && part.message !== "") return part.message
  // A typed failure without a message still says what it was; any other object is fields.
  return "_tag" in part && typeof part._tag === "string" ? part._tag : undefined
}
