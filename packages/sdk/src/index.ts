export * from "./api.js"
