import { sessionStoreContract } from "@lathe/core/testing/store-contract"
import { freshStore } from "./pg.js"

sessionStoreContract("Postgres", () => freshStore())
