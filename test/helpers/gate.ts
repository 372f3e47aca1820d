/**
 * An HTTP gate in front of a provider emulator: while shut it holds every request that
 * arrives (counted in `waiting`) and passes them all on when opened. A test that needs runs
 * in flight at once keeps them there until it has seen every request decided, rather than
 * trusting a provider delay to outlast a busy machine.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Gate {
  /** http://127.0.0.1:port: the provider base URL to give the gateway. */
  url: string;
  /** Where requests go (the emulator's base URL); set before the first request. */
  target: string;
  /** Requests held now. */
  readonly waiting: number;
  /** Holds requests from now on. */
  shut(): void;
  /** Passes the held requests on, and every later one. */
  open(): void;
  close(): Promise<void>;
}

export async function startGate(): Promise<Gate> {
  let held: (() => void)[] | undefined;
  const forward = (req: IncomingMessage, res: ServerResponse, target: string) => {
    const url = new URL(req.url ?? '/', target);
    const upstream = request(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  const gate: Gate = {
    url: '',
    target: '',
    get waiting() {
      return held?.length ?? 0;
    },
    shut() {
      held ??= [];
    },
    open() {
      const release = held ?? [];
      held = undefined;
      for (const pass of release) pass();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = createServer((req, res) => {
    // The body is read later, when the request is passed on.
    req.pause();
    if (held === undefined) forward(req, res, gate.target);
    else held.push(() => forward(req, res, gate.target));
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  gate.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return gate;
}
