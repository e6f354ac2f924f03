import { Contract } from '@app/common';
import type { ToolsetConfig } from '@app/config';
import type { UpstreamPort } from '@app/upstream';
import type { ContractDriver } from './contract-driver';
import { McpTasksDriver } from './mcp-tasks.driver';
import { OrdinaryDriver } from './ordinary.driver';
import { SyncCallDriver } from './sync-call.driver';

/** One driver per upstream contract; the poller picks a task's driver by its toolset. */
export class DriverRegistry {
  constructor(private readonly drivers: Readonly<Record<Contract, ContractDriver>>) {}

  /** The three standard drivers over one connection layer. */
  static forPort(port: UpstreamPort): DriverRegistry {
    return new DriverRegistry({
      [Contract.Ordinary]: new OrdinaryDriver(port),
      [Contract.McpTasks]: new McpTasksDriver(port),
      [Contract.SyncCall]: new SyncCallDriver(port),
    });
  }

  get(contract: Contract): ContractDriver {
    const driver = this.drivers[contract];
    if (!driver) throw new Error(`no driver for contract "${String(contract)}"`);
    return driver;
  }

  forToolset(toolset: ToolsetConfig): ContractDriver {
    return this.get(toolset.contract);
  }
}
