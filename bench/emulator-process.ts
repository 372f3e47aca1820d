/**
 * A provider emulator in its own process for the benchmark. Prints one JSON line
 * `{"baseUrl": …, "apiKey": …}`. BENCH_EMULATOR_KIND picks the protocol;
 * BENCH_EMULATOR_DEFAULT (a JSON scenario) and BENCH_EMULATOR_CHUNK_DELAY_MS set its default answer.
 */
import { startEmulator } from '../emulators/index.ts';
import type { EmulatorKind, Scenario } from '../emulators/types.ts';

const kind = (process.env.BENCH_EMULATOR_KIND ?? 'openai') as EmulatorKind;
const emulator = await startEmulator(kind, { port: 0, record: false });
const scenario = process.env.BENCH_EMULATOR_DEFAULT;
const chunkDelayMs = Number(process.env.BENCH_EMULATOR_CHUNK_DELAY_MS ?? '0');
if (scenario !== undefined) emulator.setDefault(JSON.parse(scenario) as Scenario, { chunkDelayMs });
console.log(JSON.stringify({ baseUrl: emulator.baseUrl, apiKey: emulator.apiKey }));
process.on('SIGTERM', () => void emulator.close().then(() => process.exit(0)));
