/**
 * The variables whose presence sets up a web backend without config (`SEARXNG_URL`, then the default key variables of
 * Tavily, Exa and Brave, in the order they are tried): without one of them, and without config, nothing is offered.
 */
export const DETECT_ENV: ReadonlyArray<string> = ["SEARXNG_URL", "TAVILY_API_KEY", "EXA_API_KEY", "BRAVE_API_KEY"]
