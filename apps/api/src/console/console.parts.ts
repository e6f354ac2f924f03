import { AdminController } from '../admin/admin.controller';
import { AnswerLinkController } from './answer-link.controller';
import { ConsoleActionsController } from './console-actions.controller';
import { ConsolePagesController } from './console-pages.controller';
import { ConsoleSessions } from './console-session.service';

/**
 * The browser console and answer links (docs/console.md), added to the API's root module rather
 * than a module of their own: they call the task, input, auth and catalog services that live
 * there, and a child module cannot see its parent's providers (re-providing them would make
 * second copies, each with its own caches and LISTEN connections).
 */
export const CONSOLE_CONTROLLERS = [
  ConsolePagesController,
  ConsoleActionsController,
  AnswerLinkController,
];

/**
 * The admin routes' handler is also provided for injection: the console's operator actions call
 * it, so they check, fence and record exactly as `POST /v1/admin/…` does.
 */
export const CONSOLE_PROVIDERS = [ConsoleSessions, AdminController];
