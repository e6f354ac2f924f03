import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { logProblem, toProblem } from '../problem/problem.filter';
import { page, problemView } from './console-views';
import { setPageHeaders } from './page-headers';

/**
 * The console's pages answer a problem as a page: the same status and the same problem fields
 * (type, title, detail, errors) as the API's `application/problem+json`, rendered as text for the
 * person in the browser. The console's JSON routes keep the API's own problem answers.
 */
@Catch()
export class ConsolePageFilter implements ExceptionFilter {
  private readonly logger = new Logger('ConsolePageFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const answer = toProblem(exception, 'GET', () => []);
    logProblem(this.logger, answer, exception);
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
    setPageHeaders(res);
    res
      .status(answer.body.status)
      .type('text/html')
      .send(page(answer.body.title, null, problemView(answer.body)));
  }
}
