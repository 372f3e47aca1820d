/**
 * A gateway in a child process (`src/main.ts serve` through tsx), as an operator runs it:
 * started with an environment, its listen address read from its log, stopped or killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface GatewayProcess {
  child: ChildProcess;
  /** http://127.0.0.1:port */
  url: string;
  /** Everything it wrote so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

/** Starts a gateway process and waits for its listen address; rejects with its output when it exits first. */
export function startGatewayProcess(env: Record<string, string>): Promise<GatewayProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let started = false;
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.stdout?.on('data', (data: Buffer) => {
      out += data.toString();
      const match = started ? null : /Server listening at (http:\/\/[^"\s]+)/.exec(out);
      if (match !== null) {
        started = true;
        resolve({
          child,
          url: match[1] as string,
          output: () => out,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            await exited;
          },
        });
      }
    });
    child.stderr?.on('data', (data: Buffer) => (out += data.toString()));
    child.once('exit', (code) => {
      if (!started) reject(Object.assign(new Error(`gateway exited ${code}: ${out}`), { exitCode: code, output: out }));
    });
  });
}
