// Subpath `prism-tools-native/mcp`: the MCP client bridge (see docs/mcp.md).
export * from "../types/mcp";
