/**
 * Which Chromium the browser tests drive (docs/operations.md#tests). Resolved once per test run by
 * vitest's globalSetup (this module's default export, in vitest.config.ts and
 * test/browser/screenshots.config.ts) and handed to every test file with `provide`/`inject`
 * (`launch()` in harness.ts reads it), in this order:
 *
 * 1. `CHROMIUM_PATH`, when set: that executable (the run stops with an error naming the variable
 *    when it is not an executable file);
 * 2. a system Chromium: `/usr/bin/chromium` (Debian's package), then `chromium` on `PATH`;
 * 3. the Chromium of the dev dependency `@sparticuz/chromium` (Linux x64 only): its brotli-packed
 *    binary, swiftshader, fonts and the shared libraries it needs beyond glibc (NSS, NSPR, expat:
 *    `al2023.tar.br`) decompressed once into `<tmpdir>/sluice-chromium-<version>`, then reused.
 *
 * Otherwise the browser tests are skipped (`browserMissing` in harness.ts) and the run prints one
 * line saying what to install.
 *
 * The decompression runs in a child process whose TMPDIR is a fresh staging folder (the package
 * writes into `os.tmpdir()` and takes any existing `chromium` file there as done, so two runs
 * sharing /tmp could hand each other a half-written binary); the staging folder is then renamed
 * into place in one step, so a folder under the final name is always complete, and a run that
 * loses the race to another one uses the winner's.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

/** A Chromium to launch: its executable and the environment variables it needs beside `process.env`. */
export interface ChromiumFound {
  executablePath: string;
  source: 'CHROMIUM_PATH' | 'system' | '@sparticuz/chromium';
  env: Record<string, string>;
}
/** No Chromium on this machine: `missing` is the one line saying what to install. */
export interface ChromiumMissing {
  missing: string;
}
export type Chromium = ChromiumFound | ChromiumMissing;

declare module 'vitest' {
  export interface ProvidedContext {
    chromium: Chromium;
  }
}

/** The platforms `@sparticuz/chromium` ships a build for (its README: x64 Linux; arm64 is a separate download). */
export const PACKAGED_PLATFORMS = ['linux-x64'];

/** Where to look, as data: the environment, the platform, and which paths are executable files. */
export interface Machine {
  env: Record<string, string | undefined>;
  platform: string;
  arch: string;
  isExecutable(path: string): boolean;
}

/** The choice before any decompression: a path to use, the npm package, or nothing (with the line to print). */
export type Choice = { executablePath: string; source: 'CHROMIUM_PATH' | 'system' } | { source: '@sparticuz/chromium' } | ChromiumMissing;

/**
 * Picks the Chromium in the order of this module's docstring. Throws when `CHROMIUM_PATH` is set
 * but names no executable file (an explicit choice that cannot be honoured is an error, not a skip).
 */
export function chooseChromium(machine: Machine): Choice {
  const override = machine.env.CHROMIUM_PATH;
  if (override) {
    if (!machine.isExecutable(override)) throw new Error(`CHROMIUM_PATH=${override} is not an executable file`);
    return { executablePath: override, source: 'CHROMIUM_PATH' };
  }
  const onPath = (machine.env.PATH ?? '').split(delimiter).filter((dir) => dir.startsWith('/')).map((dir) => join(dir, 'chromium'));
  const system = ['/usr/bin/chromium', ...onPath].find((path) => machine.isExecutable(path));
  if (system) return { executablePath: system, source: 'system' };
  const platform = `${machine.platform}-${machine.arch}`;
  if (PACKAGED_PLATFORMS.includes(platform)) return { source: '@sparticuz/chromium' };
  return { missing: `Browser tests skipped: no Chromium found, and @sparticuz/chromium has no build for ${platform}; install Chromium and set CHROMIUM_PATH to its executable.` };
}

/** True for an existing regular file this process may execute. */
export function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The entry module of `@sparticuz/chromium` and its folder (the brotli files are in `bin/` there). */
function packageFiles(): { entry: string; dir: string } {
  const entry = createRequire(import.meta.url).resolve('@sparticuz/chromium');
  return { entry, dir: join(dirname(entry), '..') };
}

/** The environment the packaged Chromium runs with: its shared libraries and fonts (see `packagedChromium`). */
function packagedEnv(dir: string): Record<string, string> {
  return { LD_LIBRARY_PATH: join(dir, 'al2023', 'lib'), FONTCONFIG_FILE: join(dir, 'fonts.conf') };
}

/**
 * The Chromium of `@sparticuz/chromium`, decompressed under `root` (default `os.tmpdir()`) into
 * `sluice-chromium-<version>` unless already there (a few seconds the first time, about 210 MB).
 * Safe to call from concurrent processes (see the module's docstring). Throws when the package is
 * not installed or its decompression fails.
 */
export async function packagedChromium(root = tmpdir()): Promise<ChromiumFound> {
  const { entry, dir: pkg } = packageFiles();
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  const dir = join(root, `sluice-chromium-${version}`);
  const executablePath = join(dir, 'chromium');
  if (!isExecutableFile(executablePath)) {
    const staging = mkdtempSync(`${dir}.staging-`);
    try {
      // The package's own executablePath() (chromium, swiftshader, fonts) and its exported inflate()
      // for the libraries it otherwise unpacks only on Amazon Linux 2023.
      const script = `const { default: Chromium, inflate } = await import(${JSON.stringify(pathToFileURL(entry).href)});
await Chromium.executablePath(); await inflate(${JSON.stringify(join(pkg, 'bin', 'al2023.tar.br'))});`;
      await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, TMPDIR: staging }, timeout: 120_000 });
      // The package's fonts.conf names /tmp/fonts; this one adds its fonts to the system's, if any.
      writeFileSync(
        join(staging, 'fonts.conf'),
        `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n  <dir>${dir}/fonts</dir>\n  <cachedir>${dir}/fonts-cache</cachedir>\n</fontconfig>\n`,
      );
      try {
        renameSync(staging, dir);
      } catch (error) {
        // Another run renamed its complete folder first: use that one.
        if (!isExecutableFile(executablePath)) throw error;
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return { executablePath, source: '@sparticuz/chromium', env: packagedEnv(dir) };
}

/** `chooseChromium` on this machine, then the decompression when it chose the npm package. */
export async function resolveChromium(env: Record<string, string | undefined> = process.env): Promise<Chromium> {
  const choice = chooseChromium({ env, platform: process.platform, arch: process.arch, isExecutable: isExecutableFile });
  if ('missing' in choice) return choice;
  if (choice.source !== '@sparticuz/chromium') return { ...choice, env: {} };
  return packagedChromium();
}

/** vitest globalSetup: resolves the Chromium once for the whole run and provides it as `chromium`. */
export default async function setup(project: TestProject): Promise<void> {
  const chromium = await resolveChromium();
  if ('missing' in chromium) console.warn(chromium.missing);
  project.provide('chromium', chromium);
}
