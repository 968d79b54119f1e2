/** The vitest config every package shares: tests run from source through the `@lathe/source` condition. */
export declare const sharedConfig: import("vite").UserConfig;
//# sourceMappingURL=vitest.shared.d.ts.map