/**
 * Sluice processes started as `npm start` starts them, and the CLI run as `npm run sluice` runs
 * it, for the tests of real processes (test/e2e/: serve, and several processes on one
 * PostgreSQL: cluster, dedupe-cluster, mastodon-cluster).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const root = new URL('../', import.meta.url).pathname;

/**
 * The process group of process `pid` (Linux /proc/<pid>/stat, field 5), to tell which started
 * process a lease holder's id names; undefined once the process is gone.
 */
export function processGroupOf(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2]);
  } catch {
    return undefined;
  }
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Polls `probe` every 250 ms until it gives a value; throws naming `what` after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 90_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface Started {
  child: ChildProcess;
  url: string;
}

/** `npm start -- --role <role>` with `env` on a free port, in its own process group; resolves once it listens. */
export async function startRole(name: string, role: string, env: NodeJS.ProcessEnv): Promise<Started> {
  const port = await freePort();
  const child = spawn('npm', ['start', '--', '--role', role], { cwd: root, env: { ...env, PORT: String(port) }, detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  await until(`${name} to listen`, () => {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${stderr}`);
    return stdout.includes('"status":"listening"') ? true : undefined;
  }, 60_000);
  return { child, url: `http://127.0.0.1:${port}` };
}

/** Sends `signal` to the process group of `child`; resolves when it has exited. */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(-child.pid!, signal);
  return exited;
}

/**
 * `npm run --silent sluice -- …args` with `env`: resolves to the one JSON document it prints
 * (docs/operations.md#cli); rejects with its stderr when it exits with another code than 0.
 */
export function runCli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'sluice', '--', ...args], { cwd: root, env });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`sluice ${args.join(' ')} → ${code}: ${err}`))));
  });
}

/**
 * Through the CLI with `env`, as an operator sets up a customer: a contract and a collection of
 * it, named as given, and a client granted the contract. Resolves to the three documents printed.
 */
export async function cliTenant(env: NodeJS.ProcessEnv, names: { contract: string; collection: string; client: string; dedupe?: string }) {
  const contract = await runCli(env, 'admin', 'contract', 'create', '--name', names.contract);
  const dedupe = names.dedupe ? ['--dedupe', names.dedupe] : [];
  const collection = await runCli(env, 'admin', 'collection', 'create', '--contract', String(contract.slug), '--name', names.collection, ...dedupe);
  const client = await runCli(env, 'admin', 'client', 'create', '--name', names.client);
  await runCli(env, 'admin', 'grant', '--consumer', String(client.consumer_id), '--contract', String(contract.slug));
  return { contract, collection, client };
}
