import { describe, expect, it } from 'vitest';
import { RecentMessages } from './recent.ts';

describe('RecentMessages', () => {
  it('gives back the ids of an author in a channel once, and no other', () => {
    const recent = new RecentMessages();
    recent.add('dallas', 'ronni', 'twitch_1');
    recent.add('dallas', 'other', 'twitch_2');
    recent.add('elsewhere', 'ronni', 'twitch_3');
    recent.add('dallas', 'ronni', 'twitch_4');
    expect(recent.take('dallas', 'ronni')).toEqual(['twitch_1', 'twitch_4']);
    expect(recent.take('dallas', 'ronni')).toEqual([]);
    expect(recent.take('elsewhere', 'ronni')).toEqual(['twitch_3']);
  });

  it('is bounded: past the limit the oldest messages are forgotten', () => {
    const recent = new RecentMessages(3);
    for (let i = 1; i <= 5; i++) recent.add('c', i % 2 ? 'odd' : 'even', `twitch_${i}`);
    expect(recent.take('c', 'odd')).toEqual(['twitch_3', 'twitch_5']);
    expect(recent.take('c', 'even')).toEqual(['twitch_4']);
  });
});
