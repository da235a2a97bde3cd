import { readFileSync } from 'node:fs';

/**
 * The package's version, read from package.json once: the CLI's `--version`, backups, the MCP
 * server's info and the OpenAPI document's `info.version` all say this one. package.json sits
 * one folder up from both src/ and dist/.
 */
export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
