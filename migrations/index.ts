import { InitialSchema1764417600000 } from './1764417600000-InitialSchema';
import { Events1795955538043 } from './1795955538043-Events';
import { ToolsetLiveness1796088318485 } from './1796088318485-ToolsetLiveness';
import { InputResponses1796089639290 } from './1796089639290-InputResponses';
import { OperatorActions1796100000000 } from './1796100000000-OperatorActions';
import { McpExposure1796200000000 } from './1796200000000-McpExposure';
import { TraceContext1796300000000 } from './1796300000000-TraceContext';
import { SubmitQuotas1796416000000 } from './1796416000000-SubmitQuotas';
import { FairShare1796420000000 } from './1796420000000-FairShare';
import { TaskDeadlines1796430000000 } from './1796430000000-TaskDeadlines';
import { SubmitTaskFunction1796440000000 } from './1796440000000-SubmitTaskFunction';
import { EventSnapshotScrub1796450000000 } from './1796450000000-EventSnapshotScrub';
import { SubmitNotifyAfterCommit1796460000000 } from './1796460000000-SubmitNotifyAfterCommit';
import { LeaseTable1796470000000 } from './1796470000000-LeaseTable';
import { ConsoleSessions1796480000000 } from './1796480000000-ConsoleSessions';
import { RetryOf1796481000000 } from './1796481000000-RetryOf';
import { UserEventStream1796482000000 } from './1796482000000-UserEventStream';
import { WorkerStreak1796483000000 } from './1796483000000-WorkerStreak';
import { WorkerSuspicion1796484000000 } from './1796484000000-WorkerSuspicion';
import { WebhookRescue1796485000000 } from './1796485000000-WebhookRescue';
import { LeanEventSnapshot1796486000000 } from './1796486000000-LeanEventSnapshot';

/** Every migration, in order. The apps compare this list with the database at boot. */
export const MIGRATIONS = [
  InitialSchema1764417600000,
  Events1795955538043,
  ToolsetLiveness1796088318485,
  InputResponses1796089639290,
  OperatorActions1796100000000,
  McpExposure1796200000000,
  TraceContext1796300000000,
  SubmitQuotas1796416000000,
  FairShare1796420000000,
  TaskDeadlines1796430000000,
  SubmitTaskFunction1796440000000,
  EventSnapshotScrub1796450000000,
  SubmitNotifyAfterCommit1796460000000,
  LeaseTable1796470000000,
  ConsoleSessions1796480000000,
  RetryOf1796481000000,
  UserEventStream1796482000000,
  WorkerStreak1796483000000,
  WorkerSuspicion1796484000000,
  WebhookRescue1796485000000,
  LeanEventSnapshot1796486000000,
];
