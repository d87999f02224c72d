// Subpath `prism-tools-native/postgres`: the PostgreSQL tool effect store and run ledger.
export * from "../types/postgres";
