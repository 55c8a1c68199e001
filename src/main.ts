/**
 * Process entry of `npm start`: the same as `sluice serve` (see `cli.ts`).
 */
import { run } from './cli.ts';

process.exitCode = await run(['serve', ...process.argv.slice(2)]);
