/**
 * A connection string as it may be logged or shown: host, port and database, never the password (in the URL's
 * user part or a `password=` parameter).
 */
export function redactDatabaseUrl(url: string): string {
  return url.replace(/\/\/([^/@:]*):[^/@]*@/, '//$1:***@').replace(/([?&]password=)[^&]*/gi, '$1***');
}

/** Where the database is, for messages: `at <host:port/database>` without user or password. */
export function databaseWhere(url: string): string {
  try {
    const parsed = new URL(url);
    return `at ${parsed.host}${parsed.pathname}`;
  } catch {
    return 'at FLAGOPS_DATABASE_URL';
  }
}
