export { startEmbeddedPostgres } from './embedded-postgres';
export type { EmbeddedDatabase, EmbeddedOptions } from './embedded-postgres';
export { EmbeddedPostgresError } from './root-cluster';
