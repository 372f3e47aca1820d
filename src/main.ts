/**
 * Entry point: `serve` (npm start), `demo` (npm run demo), `admin …` (npm run admin).
 * A failure to start is one line naming what to change (startup-failure.ts), never a stack.
 */
import { runAdminCli, UsageError } from './cli/admin-cli.ts';
import { loadConfig, type Config } from './config.ts';
import { runDemo } from './demo.ts';
import { createGateway, type Gateway } from './gateway.ts';
import { describeStartupFailure, listenFailure } from './startup-failure.ts';

async function serve(config: Config): Promise<Gateway> {
  const gateway = await createGateway(config);
  try {
    await gateway.app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await gateway.close().catch(() => undefined);
    throw listenFailure(error, config.host, config.port);
  }
  const stop = async () => {
    await gateway.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  return gateway;
}

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        await serve(loadConfig());
        return;
      case 'demo':
        await runDemo();
        return;
      case 'admin':
        process.exitCode = await runAdminCli(rest);
        return;
      default:
        console.error(`Unknown command '${command}'. Use serve, demo or admin.`);
        process.exitCode = 2;
    }
  } catch (error) {
    const failure = describeStartupFailure(error, [UsageError]);
    console.error(failure.line);
    process.exit(failure.exitCode);
  }
}

await main(process.argv.slice(2));
