import { Logger } from "effect"

/**
 * The cluster's own log lines (Effect Cluster logs "Listening on …" and its warnings through Effect's logger, which
 * writes to stdout by default): warnings and errors go to `report`, the rest is dropped. stdout stays for the
 * command's own first line.
 */
export const reportLogger = (report: (line: string) => void) =>
  Logger.layer([
    Logger.make((options) => {
      if (options.logLevel !== "Warn" && options.logLevel !== "Error" && options.logLevel !== "Fatal") return
      const parts = Array.isArray(options.message) ? options.message : [options.message]
      report(
        parts
          .map((part) =>
            typeof part === "string"
              ? part
              : part instanceof Error
                ? part.message
                : typeof part === "object" && part !== null && "message" in part
                  ? String((part as { message: unknown }).message)
                  : JSON.stringify(part)
          )
          .join(": ")
      )
    })
  ])
