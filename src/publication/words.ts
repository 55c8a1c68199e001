/**
 * The wall's own words in its language (docs/api.md#publication-settings): the labels, buttons
 * and notices it shows besides the items. Relative times come from `Intl.RelativeTimeFormat` in
 * any language the runtime knows; these words exist for a few languages, found by the exact tag,
 * then its base language (`pt-BR` → `pt`), else English.
 */

export interface Words {
  empty: string;
  older: string;
  open: string;
  playVideo: string;
  viewOriginal: string;
  close: string;
  kudos: string;
  justNow: string;
  /** Announced when one item arrives live. */
  newPost: string;
  /** Announced when several arrive: `{n}` is their number. */
  newPosts: string;
  fullscreen: string;
  pauseScrolling: string;
  resumeScrolling: string;
  /** The display page's QR code, as its text alternative: `{url}` is the address it holds. */
  qrCode: string;
  /** The badge of a pinned item (docs/api.md#pin-and-spotlight). */
  pinned: string;
}

const WORDS: Record<string, Words> = {
  en: {
    empty: 'Nothing published here yet.',
    older: 'Older posts',
    open: 'Open',
    playVideo: 'Play video',
    viewOriginal: 'View original',
    close: 'Close',
    kudos: 'kudos',
    justNow: 'just now',
    newPost: '1 new post',
    newPosts: '{n} new posts',
    fullscreen: 'Full screen',
    pauseScrolling: 'Pause scrolling',
    resumeScrolling: 'Resume scrolling',
    qrCode: 'QR code: {url}',
    pinned: 'Pinned',
  },
  nl: {
    empty: 'Hier is nog niets gepubliceerd.',
    older: 'Oudere berichten',
    open: 'Openen',
    playVideo: 'Video afspelen',
    viewOriginal: 'Origineel bekijken',
    close: 'Sluiten',
    kudos: 'kudos',
    justNow: 'zojuist',
    newPost: '1 nieuw bericht',
    newPosts: '{n} nieuwe berichten',
    fullscreen: 'Volledig scherm',
    pauseScrolling: 'Scrollen pauzeren',
    resumeScrolling: 'Scrollen hervatten',
    qrCode: 'QR-code: {url}',
    pinned: 'Vastgezet',
  },
  de: {
    empty: 'Hier wurde noch nichts veröffentlicht.',
    older: 'Ältere Beiträge',
    open: 'Öffnen',
    playVideo: 'Video abspielen',
    viewOriginal: 'Original ansehen',
    close: 'Schließen',
    kudos: 'Kudos',
    justNow: 'gerade eben',
    newPost: '1 neuer Beitrag',
    newPosts: '{n} neue Beiträge',
    fullscreen: 'Vollbild',
    pauseScrolling: 'Scrollen anhalten',
    resumeScrolling: 'Scrollen fortsetzen',
    qrCode: 'QR-Code: {url}',
    pinned: 'Angeheftet',
  },
  fr: {
    empty: 'Rien n’a encore été publié ici.',
    older: 'Publications plus anciennes',
    open: 'Ouvrir',
    playVideo: 'Lire la vidéo',
    viewOriginal: 'Voir l’original',
    close: 'Fermer',
    kudos: 'kudos',
    justNow: 'à l’instant',
    newPost: '1 nouvelle publication',
    newPosts: '{n} nouvelles publications',
    fullscreen: 'Plein écran',
    pauseScrolling: 'Mettre le défilement en pause',
    resumeScrolling: 'Reprendre le défilement',
    qrCode: 'Code QR : {url}',
    pinned: 'Épinglé',
  },
  es: {
    empty: 'Todavía no se ha publicado nada aquí.',
    older: 'Publicaciones anteriores',
    open: 'Abrir',
    playVideo: 'Reproducir vídeo',
    viewOriginal: 'Ver original',
    close: 'Cerrar',
    kudos: 'kudos',
    justNow: 'ahora mismo',
    newPost: '1 publicación nueva',
    newPosts: '{n} publicaciones nuevas',
    fullscreen: 'Pantalla completa',
    pauseScrolling: 'Pausar el desplazamiento',
    resumeScrolling: 'Reanudar el desplazamiento',
    qrCode: 'Código QR: {url}',
    pinned: 'Fijado',
  },
};

/** The languages with words of their own (others show English words and their own relative times). */
export const WORD_LANGUAGES = Object.keys(WORDS);

/** The words for `language` (a canonical BCP 47 tag): its own, its base language's, else English with `Intl`'s "now". */
export function wordsFor(language = 'en'): Words {
  const own = WORDS[language] ?? WORDS[language.split('-')[0]!.toLowerCase()];
  if (own) return own;
  return { ...WORDS.en!, justNow: relativeFormat(language).format(0, 'second') };
}

const formats = new Map<string, Intl.RelativeTimeFormat>();

/** A short relative-time format for `language`, numeric only where needed ("yesterday"); cached (at most 64 languages). */
export function relativeFormat(language: string): Intl.RelativeTimeFormat {
  let format = formats.get(language);
  if (!format) {
    format = new Intl.RelativeTimeFormat(language, { numeric: 'auto', style: 'short' });
    if (formats.size >= 64) formats.delete(formats.keys().next().value!);
    formats.set(language, format);
  }
  return format;
}
