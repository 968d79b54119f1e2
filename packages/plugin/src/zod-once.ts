/**
 * Parse options for a zod schema that parses a handful of times per process (config files, agent, skill and MCP
 * server definitions). On an object schema's first parse zod compiles a fast path with `new Function`, which costs
 * more at start-up than it saves when the schema hardly parses again. Schemas that parse on every step (a tool's
 * input) keep the fast path.
 */
export const parseOnce = { jitless: true } as const
