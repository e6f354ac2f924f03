// Guards the headroom's side of the claim (docs/leases.md, "Fair share"): the claim is told how
// many of its rows are open to anyone, and one that the headroom may have cut short claims again
// as slots free rather than at once; one that a concurrent claim kept short says so.
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { Phase } from '@app/common';
import { McpServersConfig, Settings } from '@app/config';
import { GatewayMetrics } from '@app/metrics';
import {
  ClaimOutcome,
  ClaimRequest,
  ClaimedTask,
  FleetRepository,
  TaskLeaseRepository,
} from '@app/persistence';
import { TaskRunnerService } from '../running/task-runner.service';
import { ClaimLoopService } from './claim-loop.service';
import { RescueHold } from './rescue-hold';
import { ServerSlots } from './server-slots';

const SLOTS = 8;

function loop(fairShare: boolean, headroom: number, answer: number, contended = false) {
  const requests: ClaimRequest[] = [];
  const leases = {
    claimBatch: (request: ClaimRequest): Promise<ClaimOutcome> => {
      requests.push(request);
      return Promise.resolve({
        contended,
        tasks: Array.from(
          { length: answer },
          (_, i) =>
            ({
              server: 'demo',
              phase: Phase.Submit,
              dueLagSeconds: 0,
              rescued: false,
              lease: { taskId: `task_${i}`, token: `token-${i}` },
            }) as ClaimedTask,
        ),
      });
    },
  } as unknown as TaskLeaseRepository;
  const settings = {
    lease: { ms: 60_000 },
    worker: {
      claimFallbackIntervalMs: 5000,
      claimMinGapMs: 20,
      fairShare,
      fairShareWeights: new Map<string, number>(),
      fairShareHeadroom: headroom,
    },
  } as unknown as Settings;
  const slots = new ServerSlots(SLOTS, new Map());
  const service = new ClaimLoopService(
    settings,
    'worker-1',
    slots,
    {} as FleetRepository,
    leases,
    new RescueHold(30_000),
    {} as TaskRunnerService,
    new GatewayMetrics(new Registry()),
    { warn: () => undefined } as unknown as PinoLogger,
    { servers: [] } as unknown as McpServersConfig,
  );
  return { service, slots, requests };
}

/** Takes `n` of the worker's slots, as running items do. */
function busy(slots: ServerSlots, n: number): void {
  for (let i = 0; i < n; i++) slots.acquire({ server: 'demo' });
}

it('the claim is open to anyone for the free slots less the headroom', async () => {
  const { service, requests } = loop(true, 2, 3);
  const batch = await service.claim(SLOTS);
  expect(requests[0].fairShare?.open).toBe(SLOTS - 2);
  // Three rows of six open places: nothing more could be locked, as with any claim not full.
  expect(batch.leftBehind).toBe(false);
});

it('a claim that used up its open places may have held rows back: it claims again as slots free', async () => {
  const { service, slots, requests } = loop(true, 2, 0);
  busy(slots, SLOTS - 2);
  const batch = await service.claim(2);
  expect(requests[0].fairShare?.open).toBe(0);
  expect(batch.leftBehind).toBe(true);
  // Not at once: the next claim would find the same headroom.
  expect(batch.again).toBe(false);
});

it('without headroom or fair share, every row is open and nothing is held back', async () => {
  const off = loop(true, 0, 2);
  busy(off.slots, SLOTS - 4);
  expect((await off.service.claim(4)).leftBehind).toBe(false);
  expect(off.requests[0].fairShare?.open).toBe(4);
  const dueOrder = loop(false, 2, 0);
  busy(dueOrder.slots, SLOTS - 2);
  expect((await dueOrder.service.claim(2)).leftBehind).toBe(false);
  expect(dueOrder.requests[0].fairShare).toBeUndefined();
});

it("a claim that a concurrent claim's locks kept short tells the engine so", async () => {
  const { service } = loop(true, 2, 1, true);
  const batch = await service.claim(SLOTS);
  expect({ contended: batch.contended, leftBehind: batch.leftBehind }).toEqual({
    contended: true,
    leftBehind: false,
  });
});
