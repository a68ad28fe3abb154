export { locateMigrations } from './locate';
export { applyMigrations, readMigrations, type Migration } from './migrations';
export { initialiseDatabases, openDatabase, type Database, type OpenDatabaseOptions, type PrismaLike } from './open';
export { pgliteConnection, postgresConnection, type SqlConnection } from './sql';
export { chooseDatabase, describeTarget, type DatabaseTarget } from './target';
