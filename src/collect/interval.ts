/**
 * How often an input is polled (docs/services.md#polling), in one place so that kinds of inputs
 * with their own rhythm (push or stream inputs that poll only as a safety net) change it here.
 */
import type { Config } from '../config.ts';
import type { InputRow } from '../store/tables.ts';

/**
 * Seconds between two successful polls of `input`: its own `interval` (docs/api.md#inputs) held
 * within POLL_INTERVAL_MIN–POLL_INTERVAL_MAX (the limits may have narrowed since it was set),
 * else its service's POLL_INTERVAL_<SERVICE>, else POLL_INTERVAL; for an input fed by push or
 * stream, at least PUSH_POLL_INTERVAL (a safety net, docs/services.md#push-and-streams).
 * Failures back off from it (`refresh.ts` `nextDelaySeconds`).
 */
export function pollIntervalOf(
  input: Pick<InputRow, 'service' | 'pollInterval' | 'feedMode'>,
  config: Pick<Config, 'pollInterval' | 'pollIntervals' | 'pollIntervalMin' | 'pollIntervalMax' | 'pushPollInterval'>,
): number {
  const own = input.pollInterval !== null ? Math.min(config.pollIntervalMax, Math.max(config.pollIntervalMin, input.pollInterval)) : (config.pollIntervals[input.service] ?? config.pollInterval);
  return input.feedMode === 'poll' ? own : Math.max(config.pushPollInterval, own);
}
