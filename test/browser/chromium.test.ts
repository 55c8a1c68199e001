/**
 * Which Chromium the browser tests drive (chromium.ts, docs/operations.md#tests): the order
 * CHROMIUM_PATH, system Chromium, npm package, as a table over made-up machines; a wrong
 * CHROMIUM_PATH is an error; and two runs unpacking the npm package's Chromium at once into the
 * same folder both get one complete, working browser (no half-written binary, no staging left).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { chooseChromium, type Machine, PACKAGED_PLATFORMS, packagedChromium } from './chromium.ts';

const SKIP_LINE = /^Browser tests skipped: no Chromium found, and @sparticuz\/chromium has no build for darwin-arm64; install Chromium and set CHROMIUM_PATH to its executable\.$/;

function machine(executables: string[], env: Record<string, string> = {}, platform = 'linux', arch = 'x64'): Machine {
  return { env: { PATH: '/usr/local/bin:/usr/bin:/bin', ...env }, platform, arch, isExecutable: (path) => executables.includes(path) };
}

describe('chooseChromium', () => {
  it.each([
    ['CHROMIUM_PATH first, even with a system Chromium', machine(['/opt/chrome/chrome', '/usr/bin/chromium'], { CHROMIUM_PATH: '/opt/chrome/chrome' }), { executablePath: '/opt/chrome/chrome', source: 'CHROMIUM_PATH' }],
    ["Debian's /usr/bin/chromium", machine(['/usr/bin/chromium', '/usr/local/bin/chromium']), { executablePath: '/usr/bin/chromium', source: 'system' }],
    ['chromium on PATH', machine(['/usr/local/bin/chromium']), { executablePath: '/usr/local/bin/chromium', source: 'system' }],
    ['relative PATH entries are not searched', machine(['bin/chromium'], { PATH: 'bin' }), { source: '@sparticuz/chromium' }],
    ['no system Chromium on Linux x64: the npm package', machine([]), { source: '@sparticuz/chromium' }],
    ['no system Chromium, no PATH at all', { ...machine([]), env: {} }, { source: '@sparticuz/chromium' }],
    ['CHROMIUM_PATH on a platform the package lacks', machine(['/Applications/Chromium'], { CHROMIUM_PATH: '/Applications/Chromium' }, 'darwin', 'arm64'), { executablePath: '/Applications/Chromium', source: 'CHROMIUM_PATH' }],
    ['a system Chromium on Linux arm64', machine(['/usr/bin/chromium'], {}, 'linux', 'arm64'), { executablePath: '/usr/bin/chromium', source: 'system' }],
  ])('%s', (_name, given, expected) => {
    expect(chooseChromium(given)).toEqual(expected);
  });

  it('on a platform the package lacks, without a Chromium: one line saying what to install', () => {
    const choice = chooseChromium(machine([], {}, 'darwin', 'arm64'));
    expect(choice).toEqual({ missing: expect.stringMatching(SKIP_LINE) });
    expect(chooseChromium(machine([], {}, 'linux', 'arm64'))).toHaveProperty('missing');
    expect(chooseChromium(machine([], {}, 'win32', 'x64'))).toHaveProperty('missing');
  });

  it('a CHROMIUM_PATH that is no executable file stops the run, naming the variable (no silent fallback)', () => {
    expect(() => chooseChromium(machine(['/usr/bin/chromium'], { CHROMIUM_PATH: '/nowhere/chromium' }))).toThrow('CHROMIUM_PATH=/nowhere/chromium is not an executable file');
  });
});

describe.skipIf(!PACKAGED_PLATFORMS.includes(`${process.platform}-${process.arch}`))('packagedChromium', () => {
  it('two runs unpacking at once into one folder both get the same complete browser, and no staging folder is left', { timeout: 120_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-chromium-race-'));
    try {
      const [first, second] = await Promise.all([packagedChromium(root), packagedChromium(root)]);
      expect(second).toEqual(first);
      expect(first.executablePath.startsWith(root)).toBe(true);
      expect(readdirSync(root)).toEqual([expect.stringMatching(/^sluice-chromium-\d+\.\d+\.\d+$/)]);
      // The browser runs with only what the package brought beside glibc (its NSS, NSPR, expat).
      const { stdout: libraries } = await promisify(execFile)('ldd', [first.executablePath], { env: { ...process.env, ...first.env }, timeout: 20_000 });
      expect(libraries).not.toContain('not found');
      expect(libraries).toContain(`libnss3.so => ${first.env.LD_LIBRARY_PATH}/libnss3.so`);
      const { stdout } = await promisify(execFile)(first.executablePath, ['--version'], { env: { ...process.env, ...first.env }, timeout: 20_000 });
      expect(stdout).toMatch(/^Chromium \d+\./);
      // A third run finds it unpacked and takes it as it is.
      await expect(packagedChromium(root)).resolves.toEqual(first);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
