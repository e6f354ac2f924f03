import { Inject, Injectable } from '@nestjs/common';
import { TaskStatus } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { TaskRow } from '@app/persistence';
import { ToolsetCatalog } from '../toolsets/toolset-catalog.service';
import {
  ProjectionContext,
  TaskSummaryView,
  TaskView,
  toTaskSummary,
  toTaskView,
} from '@app/views';

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

  async detail(row: TaskRow): Promise<TaskView> {
    const [view] = await this.present([row], toTaskView);
    return view;
  }

  summaries(rows: TaskRow[]): Promise<TaskSummaryView[]> {
    return this.present(rows, toTaskSummary);
  }

  private async present<V>(
    rows: TaskRow[],
    project: (row: TaskRow, ctx: ProjectionContext) => V,
  ): Promise<V[]> {
    const trackingDegradedAfter = this.settings.scheduling.trackingDegradedAfter;
    const unavailable = rows.some((r) => r.status === TaskStatus.Queued)
      ? await this.catalog.unavailability()
      : () => null;
    return rows.map((row) =>
      project(row, { trackingDegradedAfter, unavailableReason: unavailable(row.toolset) }),
    );
  }
}
