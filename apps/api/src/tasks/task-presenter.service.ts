import { Inject, Injectable } from '@nestjs/common';
import { TaskStatus } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { CatalogEntry, TaskRow } from '@app/persistence';
import { ToolsetCatalog, unavailableReasonOf } from '../toolsets/toolset-catalog.service';
import { TaskSummaryView, TaskView, toTaskSummary, toTaskView } from '@app/views';

/**
 * Shows tasks: the whitelist projection plus what it needs from settings and the catalog. The
 * catalog is read only when a queued task is shown, since only those say why they wait.
 */
@Injectable()
export class TaskPresenter {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly catalog: ToolsetCatalog,
  ) {}

  /**
   * One task in detail. `known` is its toolset's catalog entry when the caller has just read it
   * (a submit has): a queued task then says why it waits without reading the catalog again.
   */
  async detail(row: TaskRow, known?: CatalogEntry): Promise<TaskView> {
    let unavailableReason: string | null = null;
    if (row.status === TaskStatus.Queued) {
      // One entry, not the whole catalog: every submit answers a queued task.
      const entry = known?.name === row.toolset ? known : await this.catalog.find(row.toolset);
      unavailableReason = unavailableReasonOf(entry);
    }
    return toTaskView(row, {
      trackingDegradedAfter: this.settings.scheduling.trackingDegradedAfter,
      unavailableReason,
    });
  }

  async summaries(rows: TaskRow[]): Promise<TaskSummaryView[]> {
    const trackingDegradedAfter = this.settings.scheduling.trackingDegradedAfter;
    const unavailable = rows.some((r) => r.status === TaskStatus.Queued)
      ? await this.catalog.unavailability()
      : () => null;
    return rows.map((row) =>
      toTaskSummary(row, { trackingDegradedAfter, unavailableReason: unavailable(row.toolset) }),
    );
  }
}
