/**
 * `npm run demo` in a child process (`src/main.ts demo`, or `npm run demo` in another folder),
 * as a newcomer runs it: ready once it prints "Press Ctrl+C"; what it printed read back.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface DemoProcess {
  child: ChildProcess;
  /** Everything it printed up to "Press Ctrl+C to stop." */
  printed: string;
  /** The gateway's origin, http://127.0.0.1:port */
  base: string;
  key: string;
  adminToken: string;
  /** SIGINT (Ctrl+C), then its exit code. */
  stop(): Promise<number | null>;
}

/** Starts the demo and waits until it is ready; rejects with its output if it exits first or is not ready within `withinMs`. */
export function startDemo(options: { cwd?: string; command?: string[]; env?: Record<string, string>; withinMs?: number } = {}): Promise<DemoProcess> {
  const [file, ...args] = options.command ?? [process.execPath, '--import', 'tsx', 'src/main.ts', 'demo'];
  // `npm run demo` runs the demo as a grandchild: Ctrl+C goes to the whole process group, as a terminal sends it.
  const group = options.command !== undefined;
  return new Promise((resolve, reject) => {
    const child = spawn(file as string, args, {
      cwd: options.cwd,
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: group,
    });
    const kill = (signal: NodeJS.Signals) => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      if (group) process.kill(-child.pid, signal);
      else child.kill(signal);
    };
    let text = '';
    let ready = false;
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    const timer = setTimeout(() => {
      if (!ready) {
        kill('SIGKILL');
        reject(new Error(`the demo was not ready within ${options.withinMs ?? 60_000} ms: ${text}`));
      }
    }, options.withinMs ?? 60_000);
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      if (ready || !text.includes('Press Ctrl+C to stop.')) return;
      ready = true;
      clearTimeout(timer);
      const base = /running at (http:\/\/\S+)/.exec(text)?.[1];
      const key = /API key \(1000 credits\):\s+(svc_live_[0-9a-f]{64})/.exec(text)?.[1];
      const adminToken = /Admin token:\s+([0-9a-f]{48})/.exec(text)?.[1];
      if (base === undefined || key === undefined || adminToken === undefined) {
        kill('SIGKILL');
        reject(new Error(`the demo printed no address, key or admin token: ${text}`));
        return;
      }
      resolve({ child, printed: text, base, key, adminToken, stop: () => (kill('SIGINT'), exited) });
    });
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`the demo exited ${code}: ${text}`));
    });
  });
}
