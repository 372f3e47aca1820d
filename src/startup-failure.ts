/**
 * Start-up failures as one line naming the variable to change, never a stack trace: a port
 * in use, a database that is unreachable, missing or refuses the login, a bad catalog, a bad
 * value. `main.ts` prints the line and exits non-zero; whatever was opened is closed first.
 */
import { CatalogError } from './catalog/catalog.ts';
import { ConfigError } from './config.ts';

/** A failure whose line is already written for the operator (exit 2, as for a bad value). */
export class StartupError extends Error {}

/** The line to print for a failure during start-up, and the exit code (`written`: errors whose message is already for the operator). */
export function describeStartupFailure(error: unknown, written: readonly (abstract new (...args: never[]) => Error)[] = []): { line: string; exitCode: number } {
  if (error instanceof ConfigError || error instanceof StartupError || written.some((type) => error instanceof type)) return { line: oneLine((error as Error).message), exitCode: 2 };
  if (error instanceof CatalogError) return { line: `CATALOG_FILE: ${oneLine(error.message)}`, exitCode: 2 };
  const message = error instanceof Error ? error.message : String(error);
  return { line: `The gateway could not start: ${oneLine(message)}`, exitCode: 1 };
}

/** `listen` refused: the port or the host named. */
export function listenFailure(error: unknown, host: string, port: number): Error {
  const code = codeOf(error);
  switch (code) {
    case 'EADDRINUSE':
      return new StartupError(`PORT: ${host}:${port} is already in use by another process: stop it, or set PORT to a free port.`);
    case 'EACCES':
      return new StartupError(`PORT: no permission to listen on port ${port} (ports below 1024 need privileges): set PORT to 1024 or above.`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(`HOST: cannot listen on '${host}' (${code}): set HOST to an address of this machine, e.g. 127.0.0.1 or 0.0.0.0.`);
    default:
      return error instanceof Error ? error : new Error(String(error));
  }
}

/** The store could not be opened: what is wrong with DATABASE_URL, without its password. */
export function databaseFailure(error: unknown, databaseUrl: string): Error {
  const code = codeOf(error);
  const message = error instanceof Error ? oneLine(error.message) : String(error);
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (code === 'DATABASE_IN_USE') {
      return new StartupError(`DATABASE_URL: the SQLite database ${path} is in use by another gateway process (${path}.lock is locked); SQLite runs one gateway process per database: stop the other one, use the admin API, or use PostgreSQL for several processes.`);
    }
    return new StartupError(`DATABASE_URL: cannot open the SQLite database ${databaseUrl.slice('sqlite:'.length)} (${message}): check the path and that this user may write there.`);
  }
  const where = postgresPlace(databaseUrl);
  switch (code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ECONNRESET':
      return new StartupError(`DATABASE_URL: cannot reach PostgreSQL at ${where.server} (${code}): start it, or point DATABASE_URL at a server that runs.`);
    case '3D000':
      return new StartupError(`DATABASE_URL: the database '${where.database}' does not exist on ${where.server}: create it (createdb ${where.database}), or point DATABASE_URL at one that does.`);
    case '28P01':
    case '28000':
      return new StartupError(`DATABASE_URL: PostgreSQL at ${where.server} refused the login of '${where.user}' (${message}): check the user and password in DATABASE_URL.`);
    default:
      return new StartupError(`DATABASE_URL: the database at ${where.server} could not be opened (${code === undefined ? '' : `${code}: `}${message}).`);
  }
}

function postgresPlace(databaseUrl: string): { server: string; database: string; user: string } {
  try {
    const url = new URL(databaseUrl);
    return { server: `${url.hostname || 'localhost'}:${url.port || '5432'}`, database: decodeURIComponent(url.pathname.slice(1)) || url.username, user: decodeURIComponent(url.username) };
  } catch {
    return { server: 'the configured server', database: '?', user: '?' };
  }
}

/** A Node or PostgreSQL error code; a connection tried on several addresses fails as an AggregateError of them. */
function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const inner = (error as { errors?: unknown }).errors;
  return Array.isArray(inner) ? codeOf(inner[0]) : undefined;
}

function oneLine(text: string): string {
  return text.split('\n').map((line) => line.trim()).filter((line) => line !== '').join(' ');
}
