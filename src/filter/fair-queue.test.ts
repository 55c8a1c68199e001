/**
 * The fair shares of the filter pool (fair-queue.ts, docs/filters.md#bounds) as tables: the order
 * in which contracts are served, the running caps, the cap on a contract's refusable queued tasks.
 *
 * Steps: `push A a1 refuse|wait|first` (answers whether it was queued), `take` (answers
 * `A:a1`, or `-` when nothing may start), `finish A` (answers `ok`).
 */
import { describe, expect, it } from 'vitest';
import { FairQueue, type ShareLimits, type WhenFull } from './fair-queue.ts';

type Step = [step: string, answer: string | boolean];

/** Runs `steps` on a fresh queue and answers each step's outcome. */
function run(limits: ShareLimits, steps: Step[]): (string | boolean)[] {
  const queue = new FairQueue<string>(limits);
  return steps.map(([step]) => {
    const [op, contract, task, whenFull] = step.split(' ');
    if (op === 'push') return queue.push(contract!, task!, whenFull as WhenFull);
    if (op === 'finish') return (queue.finish(contract!), 'ok');
    const next = queue.take();
    return next ? `${next.contractId}:${next.task}` : '-';
  });
}

const two = { slots: 2, runningPerContract: 1, queuedPerContract: 4 };
const one = { slots: 1, runningPerContract: 1, queuedPerContract: 2 };

const cases: { name: string; limits: ShareLimits; steps: Step[] }[] = [
  {
    name: "B's one task runs on the thread A cannot take, A's backlog waits",
    limits: two,
    steps: [
      ['push A a1 refuse', true],
      ['push A a2 refuse', true],
      ['push A a3 refuse', true],
      ['take', 'A:a1'],
      ['take', '-'], // A is at its running cap; one slot stays free for others
      ['push B b1 refuse', true],
      ['take', 'B:b1'],
      ['take', '-'], // every slot taken
      ['finish B', 'ok'],
      ['take', '-'], // A still at its cap
      ['finish A', 'ok'],
      ['take', 'A:a2'],
    ],
  },
  {
    name: 'one slot: contracts take turns, one task each, in the order they first waited',
    limits: { ...one, queuedPerContract: 10 },
    steps: [
      ['push A a1 refuse', true],
      ['push A a2 refuse', true],
      ['push A a3 refuse', true],
      ['push B b1 refuse', true],
      ['push B b2 refuse', true],
      ['push C c1 wait', true],
      ['take', 'A:a1'],
      ['finish A', 'ok'],
      ['take', 'B:b1'],
      ['finish B', 'ok'],
      ['take', 'C:c1'],
      ['finish C', 'ok'],
      ['take', 'A:a2'],
      ['finish A', 'ok'],
      ['take', 'B:b2'],
      ['finish B', 'ok'],
      ['take', 'A:a3'],
      ['finish A', 'ok'],
      ['take', '-'],
    ],
  },
  {
    name: 'a contract that comes back after its queue emptied waits for its turn at the back',
    limits: { ...one, queuedPerContract: 10 },
    steps: [
      ['push A a1 wait', true],
      ['push B b1 wait', true],
      ['take', 'A:a1'],
      ['finish A', 'ok'],
      ['push A a2 wait', true],
      ['push C c1 wait', true],
      ['take', 'B:b1'],
      ['finish B', 'ok'],
      ['take', 'A:a2'],
      ['finish A', 'ok'],
      ['take', 'C:c1'],
    ],
  },
  {
    name: 'the cap counts the refusable tasks waiting, not the running one; a refusal queues nothing',
    limits: one,
    steps: [
      ['push A a1 refuse', true],
      ['take', 'A:a1'],
      ['push A a2 refuse', true],
      ['push A a3 refuse', true],
      ['push A a4 refuse', false],
      ['push B b1 refuse', true], // another contract's share is its own
      ['finish A', 'ok'],
      ['take', 'B:b1'],
      ['push A a5 refuse', false], // still two of A waiting
      ['finish B', 'ok'],
      ['take', 'A:a2'],
      ['push A a6 refuse', true], // one left the queue: room for one
      ['finish A', 'ok'],
      ['take', 'A:a3'],
      ['finish A', 'ok'],
      ['take', 'A:a6'],
    ],
  },
  {
    name: 'waiting tasks (polls) are never refused and leave room for refusable ones',
    limits: one,
    steps: [
      ['push A p1 wait', true],
      ['push A p2 wait', true],
      ['push A p3 wait', true],
      ['push A d1 refuse', true],
      ['push A d2 refuse', true],
      ['push A d3 refuse', false],
      ['push A p4 wait', true],
      ['take', 'A:p1'],
      ['finish A', 'ok'],
      ['take', 'A:p2'],
    ],
  },
  {
    name: 'a task sent again goes first in its own queue, not ahead of other contracts, and is never refused',
    limits: one,
    steps: [
      ['push A a1 refuse', true],
      ['take', 'A:a1'],
      ['push A a2 refuse', true],
      ['push A a3 refuse', true],
      ['push A a4 refuse', false],
      ['push B b1 refuse', true],
      ['finish A', 'ok'],
      ['push A again first', true], // A's share is full: sent again all the same
      ['take', 'B:b1'],
      ['finish B', 'ok'],
      ['take', 'A:again'],
      ['finish A', 'ok'],
      ['take', 'A:a2'],
    ],
  },
  {
    name: 'four slots, three per contract: a lone contract uses three, a second one the fourth at once',
    limits: { slots: 4, runningPerContract: 3, queuedPerContract: 4 },
    steps: [
      ['push A a1 refuse', true],
      ['push A a2 refuse', true],
      ['push A a3 refuse', true],
      ['push A a4 refuse', true],
      ['take', 'A:a1'],
      ['take', 'A:a2'],
      ['take', 'A:a3'],
      ['take', '-'],
      ['push B b1 refuse', true],
      ['push B b2 refuse', true],
      ['take', 'B:b1'],
      ['take', '-'],
      ['finish A', 'ok'],
      ['take', 'B:b2'], // B's turn: A was served last
      ['finish A', 'ok'],
      ['take', 'A:a4'],
    ],
  },
];

describe('FairQueue', () => {
  it.each(cases)('$name', ({ limits, steps }) => {
    expect(run(limits, steps)).toEqual(steps.map(([, answer]) => answer));
  });

  it('refuses to finish a task that is not running', () => {
    const queue = new FairQueue<string>(one);
    expect(() => queue.finish('A')).toThrow('no task of A is running');
    queue.push('A', 'a1', 'wait');
    expect(() => queue.finish('A')).toThrow('no task of A is running');
    queue.take();
    queue.finish('A');
    expect(queue.of('A')).toEqual({ waiting: 0, running: 0 });
  });
});
