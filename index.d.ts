// Public types of prism-tools-native. Each concern's types live in types/<concern>.d.ts.

/** The version of the native addon that was loaded. */
export declare function nativeVersion(): string

export * from "./types/search";
