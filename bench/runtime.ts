/**
 * How `npm start` runs the server (package.json `scripts.start`), for the benchmarks that start
 * one as a child process, so that what they measure (memory above all) is the service's: the Node
 * flags (`--max-semi-space-size`, `--heap-growing-percent`) and the environment (`MALLOC_ARENA_MAX`)
 * of docs/operations.md#reads-at-scale.
 */
import { readFileSync } from 'node:fs';

/** The start script's Node flags after this process's own, and its environment over `process.env`. */
export function serverRuntime(): { execArgv: string[]; env: NodeJS.ProcessEnv } {
  const start: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts.start;
  const env = Object.fromEntries([...start.matchAll(/\b([A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
  return { execArgv: [...process.execArgv, ...start.split(/\s+/).filter((word) => word.startsWith('--'))], env: { ...process.env, ...env } };
}
