/** A remote URL with any password replaced, for logs and errors. */
export function redact(url: string): string {
  return url.replace(/\/\/([^/@:]*):[^/@]*@/, '//$1:***@');
}
