import { Injectable, PipeTransform } from '@nestjs/common';
import { TASK_ID_PATTERN, THREAD_ID_PATTERN } from '@app/common';
import { MalformedRequest } from '../refusals/refusal';

/** Validates the `thread_id` path parameter: caller-chosen, `^[A-Za-z0-9._:-]{1,128}$`. */
@Injectable()
export class ThreadIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!THREAD_ID_PATTERN.test(value)) {
      throw new MalformedRequest('Invalid thread ID.', [
        { path: 'thread_id', message: 'must match ^[A-Za-z0-9._:-]{1,128}$' },
      ]);
    }
    return value;
  }
}

/** Validates the `task_id` path parameter: IDs this API issued look like `task_` + 26 chars. */
@Injectable()
export class TaskIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!TASK_ID_PATTERN.test(value)) {
      throw new MalformedRequest('Invalid task ID.', [
        { path: 'task_id', message: 'must match ^task_[a-z2-7]{26}$' },
      ]);
    }
    return value;
  }
}
