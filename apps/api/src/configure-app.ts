import { INestApplication } from '@nestjs/common';
import { Settings } from '@app/config';

/**
 * Everything main.ts does to the app besides listening, shared with the tests so they run the
 * API exactly as it is deployed.
 */
export function configureApp(app: INestApplication, _settings: Settings): void {
  app.getHttpAdapter().getInstance().disable('x-powered-by');
}
