export type { CliIO, Command } from "./io.js"
export { main } from "./main.js"
