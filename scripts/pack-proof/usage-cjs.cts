// The CommonJS side under node16/nodenext: `require` types resolve through the "require" condition.
import prism = require("prism-tools-native");

const registry: prism.ToolRegistry = prism.createToolRegistry([]);
export const names: string[] = registry.list().map((tool) => tool.name);
