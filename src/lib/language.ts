/**
 * Language of an item whose source names none (docs/api.md#language: detected from the text, ISO
 * 639-1, else absent). Uses eld (Efficient Language Detector, medium n-gram set: ~40 µs per
 * text, 60 languages, ISO 639-1 codes) and answers undefined when eld does not call its own
 * result reliable, so short or mixed texts stay without a language rather than a wrong one.
 */

type Detector = typeof import('eld/medium').eld;
let detector: Detector | undefined;

/**
 * Loads the detector on first use: its n-gram tables cost about 150 MB of memory, which a
 * process that only reads (the queue role) never pays.
 */
async function load(): Promise<Detector> {
  detector ??= (await import('eld/medium')).eld;
  return detector;
}

/** Text of an HTML fragment for detection: tags, entities and addresses removed. */
function plain(html: string): string {
  return html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&[#a-z0-9]+;/gi, ' ')
    .replace(/\bhttps?:\/\/\S+/g, ' ')
    .replace(/[@#][\p{L}\p{N}_]+/gu, ' ');
}

/** ISO 639-1 code of the text's language, or undefined when unsure. Reads at most 2 000 characters. */
export async function detectLanguage(...texts: (string | undefined | null)[]): Promise<string | undefined> {
  const text = plain(texts.filter(Boolean).join('\n').slice(0, 4000)).replace(/\s+/g, ' ').trim().slice(0, 2000);
  if (text.length < 12) return undefined;
  const result = (await load()).detect(text);
  return result.language && result.isReliable() ? result.language : undefined;
}

/**
 * The item with its language: the source's own when it names one, else the one detected from its
 * title and text, else none (`docs/api.md`, "Content items"). Returns the same object when
 * nothing changes.
 */
export async function withLanguage<T extends { title?: string; text: string; language?: string }>(item: T): Promise<T> {
  if (item.language) return item;
  const language = await detectLanguage(item.title, item.text);
  return language ? { ...item, language } : item;
}
