/**
 * How often an input is polled (docs/services.md#polling), in one place so that kinds of inputs
 * with their own rhythm (push or stream inputs that poll only as a safety net) change it here.
 */
import type { Config } from '../config.ts';
import type { InputRow } from '../store/tables.ts';

/**
 * Seconds between two successful polls of `input`: its own `interval` (docs/api.md#inputs) held
 * within POLL_INTERVAL_MIN–POLL_INTERVAL_MAX (the limits may have narrowed since it was set),
 * else its service's POLL_INTERVAL_<SERVICE>, else POLL_INTERVAL. Failures back off from it
 * (`refresh.ts` `nextDelaySeconds`).
 */
export function pollIntervalOf(input: Pick<InputRow, 'service' | 'pollInterval'>, config: Pick<Config, 'pollInterval' | 'pollIntervals' | 'pollIntervalMin' | 'pollIntervalMax'>): number {
  if (input.pollInterval !== null) return Math.min(config.pollIntervalMax, Math.max(config.pollIntervalMin, input.pollInterval));
  return config.pollIntervals[input.service] ?? config.pollInterval;
}
