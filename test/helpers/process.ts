/**
 * A gateway in a child process (`src/main.ts serve` through tsx), as an operator runs it:
 * started with an environment (over this process's, listening on 127.0.0.1 at a free port),
 * ready once its log names the listen address; stopped, or killed by the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface GatewayProcess {
  child: ChildProcess;
  /** http://127.0.0.1:port */
  url: string;
  /** Everything it wrote so far (stdout and stderr). */
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  /** SIGTERM, then waits for the exit (nothing when it has exited already). */
  stop(): Promise<void>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
}

/** Starts a gateway process and waits for its listen address; rejects with its output when it exits first. */
export function startGatewayProcess(env: Record<string, string | undefined>): Promise<GatewayProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let started = false;
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    const signal = async (name: NodeJS.Signals) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(name);
      await exited;
    };
    // The log is read to its end (so the child never blocks on a full pipe) and kept for output().
    child.stdout?.on('data', (data: Buffer) => {
      out += data.toString();
      const match = started ? null : /Server listening at (http:\/\/[^"\s]+)/.exec(out);
      if (match !== null) {
        started = true;
        resolve({ child, url: match[1] as string, output: () => out, exited, stop: () => signal('SIGTERM'), kill: () => signal('SIGKILL') });
      }
    });
    child.stderr?.on('data', (data: Buffer) => (out += data.toString()));
    child.once('exit', (code) => {
      if (!started) reject(Object.assign(new Error(`gateway exited ${code}: ${out}`), { exitCode: code, output: out }));
    });
  });
}
