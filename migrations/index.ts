import { InitialSchema1764417600000 } from './1764417600000-InitialSchema';

/** Every migration, in order. The apps compare this list with the database at boot. */
export const MIGRATIONS = [InitialSchema1764417600000];
