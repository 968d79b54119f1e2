import { logText } from "@lathe/core"
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
      report(logText(options.message))
    })
  ])
