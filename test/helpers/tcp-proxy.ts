/**
 * A TCP proxy in front of a server (Redis), so a test can take the server away from one
 * gateway and give it back: `cut()` refuses new connections and drops open ones;
 * `delay(ms)` makes what the server sends arrive that much later (in order), as from a
 * busy or distant Redis.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** The target's URL with the proxy's port, e.g. redis://127.0.0.1:PORT. */
  url: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  /** Holds every chunk the server sends for `ms` before passing it on; 0 passes at once. */
  delay(ms: number): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetUrl: string): Promise<TcpProxy> {
  const target = new URL(targetUrl);
  const targetPort = Number(target.port || 6379);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let delayMs = 0;

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(targetPort, target.hostname);
        sockets.add(client).add(upstream);
        client.pipe(upstream);
        upstream.on('data', delayed(client, () => delayMs));
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        const address = s.address();
        if (address !== null && typeof address === 'object') port = address.port;
        server = s;
        resolve();
      });
    });

  const cut = async () => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()));
  };

  await listen();
  const url = new URL(targetUrl);
  url.port = String(port);
  return {
    port,
    url: url.toString().replace(/\/$/, ''),
    cut,
    restore: () => (server === undefined ? listen() : Promise.resolve()),
    delay: (ms) => {
      delayMs = ms;
    },
    close: cut,
  };
}

/** Writes each chunk to `to` once `delayMs()` has passed since it came, never out of order. */
function delayed(to: Socket, delayMs: () => number): (chunk: Buffer) => void {
  const queue: { due: number; chunk: Buffer }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const drain = () => {
    timer = undefined;
    while (queue.length > 0 && (queue[0] as { due: number }).due <= Date.now()) to.write((queue.shift() as { chunk: Buffer }).chunk);
    if (queue.length > 0) timer = setTimeout(drain, (queue[0] as { due: number }).due - Date.now());
  };
  return (chunk) => {
    const wait = delayMs();
    if (wait === 0 && queue.length === 0) {
      to.write(chunk);
      return;
    }
    queue.push({ due: Math.max(Date.now() + wait, queue.at(-1)?.due ?? 0), chunk });
    timer ??= setTimeout(drain, Math.max(0, (queue[0] as { due: number }).due - Date.now()));
  };
}

/** A port with nothing listening (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const address = s.address();
  await new Promise<void>((resolve) => s.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
