/** What PgPushLog.hookTarget starts with; in a file of its own so that the files' hooks never load the PostgreSQL client. */
export const PG_HOOK_TARGET = 'postgres:';
