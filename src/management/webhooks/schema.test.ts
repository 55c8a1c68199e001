import { describe, expect, it } from 'vitest';
import { urlProblems } from './schema.ts';

describe('urlProblems', () => {
  it.each([
    ['https://hooks.example.com/in', false, true],
    ['http://hooks.example.com:8080/in?x=1', false, true],
    ['http://93.184.216.34/', false, true],
    ['http://[2606:4700::1111]/', false, true],
    ['ftp://hooks.example.com/', false, false],
    ['hooks.example.com/in', false, false],
    ['https://user:pw@hooks.example.com/', false, false],
    ['http://127.0.0.1:9/', false, false],
    ['http://0x7f000001/', false, false],
    ['http://10.0.0.8/', false, false],
    ['http://192.168.1.1/', false, false],
    ['http://169.254.169.254/latest', false, false],
    ['http://[::1]/', false, false],
    ['http://[::ffff:7f00:1]/', false, false],
    ['http://[fd00::1]/', false, false],
    ['http://localhost:8080/', false, false],
    ['http://api.localhost/', false, false],
    ['http://127.0.0.1:9/', true, true],
    ['http://localhost:8080/', true, true],
    ['ftp://127.0.0.1/', true, false],
  ])('%s (allow private %s) → valid %s', (url, allowPrivate, valid) => {
    const problems = urlProblems(url, allowPrivate);
    expect(problems.length === 0).toBe(valid);
    for (const problem of problems) expect(problem.propertyName).toBe('url');
  });
});
