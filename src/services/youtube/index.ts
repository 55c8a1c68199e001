/**
 * The module of YouTube: its row, its connector, its quota (Data API units per Pacific day and
 * credential, YOUTUBE_DAILY_QUOTA; Google "Quota Calculator": search 100 units, the other reads 1,
 * failed calls counted too; the keyless channel feed costs none), and push: a `channel` input is
 * fed by YouTube's WebSub hub when WEBSUB_YOUTUBE is on (developers.google.com/youtube/v3/guides/push_notifications).
 * Listed in `../index.ts`.
 */
import { pacificDay } from '../../lib/quota-windows.ts';
import { youtubeChannelId, youtubeTopic } from '../kit/websub-hub.ts';
import { handleForm, type ServiceModule } from '../module.ts';
import { pushedVideos, youtube as connector } from './connector.ts';
import { youtubePollUnits, youtubeUnits } from './quota.ts';
import { row } from './row.ts';

export const youtube = {
  name: 'youtube',
  row,
  connector,
  // Channel, playlist and video ids are case-sensitive (YouTube Data API ids): as sent; a `live` @handle is matched without case.
  sourceForm: (type, text) => (type === 'channel' || type === 'playlist' || (type === 'live' && !text.startsWith('@')) ? text : handleForm(text)),
  quota: {
    kind: 'units',
    name: 'youtube-units',
    unit: 'units',
    when: 'today (Pacific time)',
    variable: 'YOUTUBE_API_KEY',
    limit: (settings) => settings.youtubeDailyUnits,
    period: pacificDay,
    take: (input, services) => (services.youtube.apiKey ? youtubePollUnits(input.type, input) : undefined),
    cost(url, _body, services) {
      const { apiUrl } = services.youtube;
      return url.startsWith(`${apiUrl}/`) ? youtubeUnits(url.slice(apiUrl.length)) : 0;
    },
    chargesFailedCalls: true,
    needs: (input, taken) => `; a poll of this ${input.type} input takes up to ${taken}`,
  },
  push: {
    enabled: (settings) => settings.youtube,
    inputs: { types: ['channel'] },
    targetOf(input, state, settings) {
      if (input.type !== 'channel' || !settings.youtube) return undefined;
      const channel = youtubeChannelId(input.input, state);
      return channel ? { hub: settings.youtubeHub, topic: youtubeTopic(channel) } : undefined;
    },
    // A video's id names it wherever it was collected: a deletion reaches every input.
    deletions: 'service',
    itemsOf: async (body, _contentType, _topic, now) => pushedVideos(body, now),
  },
} as const satisfies ServiceModule<'youtube'>;
