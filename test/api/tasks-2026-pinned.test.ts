// Guards against a strict 2026-07-28 upstream pinned with `"protocolVersion": "2026-07-28"` being
// treated as unavailable: its toolsets show available within 10 s and the SEP-2663 paths run
// against it (the slow poller-kill path runs in tasks-2026-strict.test.ts). The paths:
// tasks-2026.paths.ts.
import { tasks2026Paths } from './tasks-2026.paths';

tasks2026Paths({ args: ['--strict-2026'], pin: '2026-07-28', slowPaths: false });
