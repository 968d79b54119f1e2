// Wildcard matching lives in @lathe/core (wildcard.ts); re-exported here for this package's users.
export { compilePattern, expandHome, isLiteralPattern, type Matcher, wildcardMatch } from "@lathe/core"
