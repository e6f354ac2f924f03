// Guards against a strict 2026-07-28 upstream (it refuses initialize with -32020) being treated
// as unavailable: its toolsets show available within 10 s and every SEP-2663 path runs against
// it, unpinned (the era found by server/discover). The paths: tasks-2026.paths.ts.
import { tasks2026Paths } from './tasks-2026.paths';

tasks2026Paths({ args: ['--strict-2026'], slowPaths: true });
