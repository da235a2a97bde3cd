import type { ValidateFunction } from 'ajv';
import type { Prompt, Resource, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { RouteAuth } from '../auth/principal.js';
import { INSTRUCTIONS } from './instructions.js';
import { compile, inputSchemaOf, outputSchemaOf, type JsonSchema } from './json-schema.js';
import { PROMPTS, type PromptSpec } from './prompts.js';
import { RESOURCES, type ResourceSpec } from './resources.js';
import { TOOLS, type ToolSpec } from './tools.js';
import type { RestRoutes } from './rest-routes.js';
import { PACKAGE_VERSION } from '../version.js';

export interface CompiledTool {
  spec: ToolSpec;
  auth: RouteAuth;
  validate: ValidateFunction;
  inputSchema: JsonSchema;
}

export interface CompiledPrompt {
  spec: PromptSpec;
  auth: { production: RouteAuth[]; engagement: RouteAuth[] };
}

/**
 * Everything about the MCP surface that does not depend on the caller, built once at
 * start-up: the list answers are handed out as they are, the validators compiled.
 */
export interface Catalogue {
  info: { name: string; version: string };
  instructions: string;
  tools: Map<string, CompiledTool>;
  toolList: { tools: Tool[] };
  resources: Map<string, { spec: ResourceSpec; auth: RouteAuth }>;
  resourceList: { resources: Resource[] };
  prompts: Map<string, CompiledPrompt>;
  promptList: { prompts: Prompt[] };
}

export function buildCatalogue(restRoutes: RestRoutes): Catalogue {
  const tools = new Map<string, CompiledTool>();
  const toolList: Tool[] = [];
  for (const spec of TOOLS) {
    const rest = restRoutes.get(spec.rest);
    const inputSchema = inputSchemaOf(rest, spec.extraInput);
    tools.set(spec.name, { spec, auth: rest.auth, validate: compile(inputSchema), inputSchema });
    toolList.push({
      name: spec.name,
      title: spec.title,
      description: spec.description,
      inputSchema,
      outputSchema: outputSchemaOf(rest, spec.listKey),
      annotations: spec.readOnly
        ? { title: spec.title, readOnlyHint: true, openWorldHint: false }
        : {
            title: spec.title,
            readOnlyHint: false,
            destructiveHint: false,
            idempotentHint: false,
            openWorldHint: false,
          },
    });
  }

  const resources = new Map(
    RESOURCES.map((spec) => [spec.uri, { spec, auth: restRoutes.get(spec.rest).auth }]),
  );
  const resourceList: Resource[] = RESOURCES.map(({ uri, name, title, description }) => ({
    uri,
    name,
    title,
    description,
    mimeType: 'application/json',
  }));

  const prompts = new Map(
    PROMPTS.map((spec) => [
      spec.name,
      {
        spec,
        auth: {
          production: spec.reads.production.map((k) => restRoutes.get(k).auth),
          engagement: spec.reads.engagement.map((k) => restRoutes.get(k).auth),
        },
      },
    ]),
  );
  const promptList: Prompt[] = PROMPTS.map(({ name, title, description, arguments: args }) => ({
    name,
    title,
    description,
    arguments: args,
  }));

  return {
    info: { name: 'prodgraph', version: PACKAGE_VERSION },
    instructions: INSTRUCTIONS,
    tools,
    toolList: { tools: toolList },
    resources,
    resourceList: { resources: resourceList },
    prompts,
    promptList: { prompts: promptList },
  };
}
