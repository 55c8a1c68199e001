import { describe, expect, it } from 'vitest';
import { greeting } from './greeting.ts';

const config = { apiUrl: 'https://sluice.example.com' };

describe('greeting', () => {
  it.each([
    {
      name: 'the demo: console, user and the password file',
      facts: { role: 'all', url: 'http://127.0.0.1:8080', credentials: '/srv/sluice/data/credentials.json', username: 'admin' },
      has: ['Console   https://sluice.example.com/console/', 'as "admin"', '/srv/sluice/data/credentials.json', 'https://sluice.example.com/docs'],
      lacks: [],
    },
    {
      name: 'no demo: how to make a user',
      facts: { role: 'all', url: 'http://127.0.0.1:8080' },
      has: ['Console   https://sluice.example.com/console/', 'admin user create'],
      lacks: ['credentials.json'],
    },
    {
      name: 'a collector serves no console',
      facts: { role: 'collector', url: 'http://127.0.0.1:8080', credentials: '/x/credentials.json', username: 'admin' },
      has: ['Sluice is running (collector)'],
      lacks: ['Console', 'credentials.json'],
    },
  ])('$name', ({ facts, has, lacks }) => {
    const text = greeting(facts, config);
    for (const part of has) expect(text).toContain(part);
    for (const part of lacks) expect(text).not.toContain(part);
    expect(text.endsWith('\n')).toBe(true);
  });
});
