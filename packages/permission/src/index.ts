/**
 * @lathe/permission: the real `PermissionNext` layer (rules, asks, remembered approvals, audit trail) and the
 * rules this package adds (`defaults`, `fromConfig`, `merge`, bash analysis); evaluation and wildcards are the author
 * kit's (`@lathe/plugin`, `@lathe/plugin/host`).
 */
export * from "./approvals.js"
export * from "./audit.js"
export * from "./bash.js"
export * from "./checks.js"
export * from "./describe.js"
export * from "./permission-live.js"
export * from "./ruleset.js"
