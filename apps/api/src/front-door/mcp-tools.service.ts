import { Injectable } from '@nestjs/common';
import { McpTaskMode } from '@app/common';
import { CatalogEntry } from '@app/persistence';
import { ToolsetCatalog } from '../toolsets/toolset-catalog.service';
import { COMPANION_TOOLS, companionStartName } from './companion-tools';

/** One tool of the front door: a toolset's own tool, or a companion tool. */
export type FrontDoorTool =
  | { kind: 'toolset'; name: string; entry: CatalogEntry; mode: McpTaskMode }
  | { kind: 'start'; name: string; entry: CatalogEntry }
  | { kind: 'companion'; name: string; action: keyof typeof COMPANION_TOOLS };

/** A tool as `tools/list` shows it (the fields both eras share). */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The 2025-11-25 task hint; the 2026 wire has no such field. */
  mode?: McpTaskMode;
}

/**
 * The tools of `/mcp`, from the catalog as the pollers last published it: each exposed toolset
 * under its configured tool name, with the catalog's description and input schema, plus the
 * companion tools when any exposed toolset turns them on. Read per request, like the catalog.
 */
@Injectable()
export class McpToolsService {
  constructor(private readonly catalog: ToolsetCatalog) {}

  async tools(): Promise<FrontDoorTool[]> {
    const entries = (await this.catalog.rawList()).filter(
      (e) => !e.removed && e.mcp?.expose !== false,
    );
    const tools: FrontDoorTool[] = [];
    let companions = false;
    for (const entry of entries) {
      const mcp = entry.mcp!;
      tools.push({ kind: 'toolset', name: mcp.toolName, entry, mode: mcp.taskMode });
      if (mcp.companionTools) {
        companions = true;
        tools.push({ kind: 'start', name: companionStartName(mcp.toolName), entry });
      }
    }
    if (companions) {
      for (const action of Object.keys(COMPANION_TOOLS) as (keyof typeof COMPANION_TOOLS)[]) {
        tools.push({ kind: 'companion', name: COMPANION_TOOLS[action].name, action });
      }
    }
    // A configured name that collides with a companion name: the toolset's own tool wins.
    const seen = new Set<string>();
    return tools.filter((tool) => !seen.has(tool.name) && seen.add(tool.name));
  }

  async find(name: string): Promise<FrontDoorTool | undefined> {
    return (await this.tools()).find((tool) => tool.name === name);
  }

  async listed(): Promise<ListedTool[]> {
    return (await this.tools()).map(listedTool);
  }
}

function listedTool(tool: FrontDoorTool): ListedTool {
  switch (tool.kind) {
    case 'toolset':
      return {
        name: tool.name,
        description: tool.entry.description,
        inputSchema: tool.entry.inputSchema,
        mode: tool.mode,
      };
    case 'start':
      return {
        name: tool.name,
        description:
          `Starts "${tool.entry.mcp!.toolName}" as a durable task and answers at once with its ` +
          `task ID; read it later with ${COMPANION_TOOLS.get.name}.\n\n${tool.entry.description}`,
        inputSchema: tool.entry.inputSchema,
        mode: 'forbidden',
      };
    case 'companion':
      return {
        name: tool.name,
        description: COMPANION_TOOLS[tool.action].description,
        inputSchema: COMPANION_TOOLS[tool.action].inputSchema,
        mode: 'forbidden',
      };
  }
}
