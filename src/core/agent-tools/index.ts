/**
 * The tools agents get (VS Code language-model tools and the MCP server serve exactly these).
 */
export * from './tools';
