/**
 * A gateway in its own process (`src/main.ts serve` through tsx), for tests that kill it:
 * started with the given environment, ready once its log names the listen address.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface SpawnedGateway {
  child: ChildProcess;
  url: string;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
}

export function spawnGateway(env: Record<string, string | undefined>): Promise<SpawnedGateway> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    let out = '';
    const onData = (data: Buffer) => {
      out += data.toString();
      const match = /Server listening at (http:\/\/[^"\s]+)/.exec(out);
      if (match !== null) {
        child.stdout?.off('data', onData);
        // Keep draining the log so the child never blocks on a full pipe.
        child.stdout?.resume();
        resolve({ child, url: match[1] as string, exited });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (data: Buffer) => (out += data.toString()));
    child.once('exit', (code) => reject(new Error(`gateway exited ${code}: ${out}`)));
  });
}
