// Subpath `prism-tools-native/embeddings`.
export * from "../types/embeddings";
