export { startEmbeddedPostgres } from './embedded-postgres';
export type { EmbeddedDatabase } from './embedded-postgres';
export { freePort } from './free-port';
export { initCluster } from './root-cluster';
export { ownedDataDir, runTool, serverIds, spawnServer } from './server-process';
export type { ServerProcess } from './server-process';
