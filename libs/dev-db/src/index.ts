export { startEmbeddedPostgres } from './embedded-postgres';
export type { EmbeddedDatabase } from './embedded-postgres';
export { freePort } from './free-port';
