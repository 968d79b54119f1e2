/**
 * @lathe/plugin/host: what Lathe's own host takes from the kit besides the author's contract: the pieces the
 * contract's implementation shares with the host (the wildcard language of rules, the full rule decision, the config
 * form of permissions), and the names only a plugin loader writes. Not for plugin authors, and not covered by the
 * kit's compatibility promise: use `@lathe/plugin`.
 */
export type { SubagentCall } from "./answers.js"
export { PermissionActionConfig, permissionRules } from "./permission.js"
export {
  type Decision,
  decide,
  IMPLICIT_SOURCE,
  implicitAsk,
  isImplicit,
  type PatternVerdict
} from "./permission-rules.js"
export { isPlugin, type TriggerHookName } from "./plugin.js"
export { hasPasswordUrl, isSecretName, MIN_CONTAINED_SECRET, SECRET_NAME } from "./secret-env.js"
export type { ToolTraits, TruncatedOutput } from "./tool.js"
export { compilePattern, expandHome, isLiteralPattern, type Matcher, wildcardMatch } from "./wildcard.js"
export { parseOnce } from "./zod-once.js"
