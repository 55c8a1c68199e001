/**
 * The chat messages a listener stored lately, by channel and author (docs/services.md#twitch-chat):
 * what a moderator's `CLEARCHAT #<channel> :<login>` removes, since the message names the user
 * only and items are not searched by author. Bounded: at most `limit` messages, the oldest
 * forgotten first; messages stored by another process (before a take-over) are not known here.
 */
export class RecentMessages {
  private readonly byAuthor = new Map<string, string[]>();
  private readonly order: { key: string; id: string }[] = [];
  private readonly limit: number;

  constructor(limit = 20_000) {
    this.limit = limit;
  }

  /** Remembers item `id` said by `login` in `channel`. */
  add(channel: string, login: string, id: string): void {
    const key = `${channel} ${login}`;
    const ids = this.byAuthor.get(key) ?? [];
    ids.push(id);
    this.byAuthor.set(key, ids);
    this.order.push({ key, id });
    while (this.order.length > this.limit) {
      const old = this.order.shift()!;
      const left = this.byAuthor.get(old.key)?.filter((x) => x !== old.id) ?? [];
      if (left.length) this.byAuthor.set(old.key, left);
      else this.byAuthor.delete(old.key);
    }
  }

  /** The item ids `login` said in `channel`, forgotten from now on. */
  take(channel: string, login: string): string[] {
    const key = `${channel} ${login}`;
    const ids = this.byAuthor.get(key) ?? [];
    this.byAuthor.delete(key);
    return ids;
  }
}
