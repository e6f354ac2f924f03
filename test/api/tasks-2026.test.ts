// Guards every SEP-2663 (MCP 2026-07-28) path through the API against an upstream that speaks
// both eras on one endpoint (the paths: tasks-2026.paths.ts).
import { tasks2026Paths } from './tasks-2026.paths';

tasks2026Paths({ args: [], slowPaths: true });
