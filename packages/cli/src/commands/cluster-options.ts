/** What `lathe runner`, `lathe serve --cluster` and `lathe cluster status` share: the store URL and cluster size. */
import type { CliIO } from "../io.js"

/** The Postgres URL from `--store` or `LATHE_STORE`, or a message saying how to give one. */
export const storeUrl = (
  command: string,
  flag: string | undefined,
  io: CliIO
): { readonly url: string } | { readonly error: string } => {
  const url = flag ?? io.env.LATHE_STORE
  if (url === undefined || url === "")
    return {
      error: `lathe ${command}: name the shared Postgres with --store postgres://user:password@host:5432/db (or set LATHE_STORE).`
    }
  if (!/^postgres(ql)?:\/\//.test(url))
    return {
      error: `lathe ${command}: --store must be a postgres:// URL (a cluster shares one Postgres), not "${url}".`
    }
  return { url }
}

/** The shard count: `--shards`, else LATHE_SHARDS, else Effect Cluster's default (300); every member must agree. */
export const shardCount = (
  command: string,
  flag: string | undefined,
  io: CliIO
): number | { readonly error: string } => {
  const raw = flag ?? io.env.LATHE_SHARDS
  if (raw === undefined || raw === "") return 300
  const shards = Number(raw)
  if (!Number.isInteger(shards) || shards < 1 || shards > 10_000)
    return { error: `lathe ${command}: the shard count must be a whole number from 1 to 10000, not "${raw}".` }
  return shards
}

/** A URL with its password replaced, for messages. */
export const redactUrl = (url: string): string => url.replace(/(\/\/[^:/@]+:)[^@]*@/, "$1***@")
