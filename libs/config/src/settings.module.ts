import { DynamicModule, Module } from '@nestjs/common';
import { Settings } from './settings';

/** Injection token of the validated {@link Settings}, the one every Nest app and module reads. */
export const SETTINGS = Symbol('SETTINGS');

/** Provides {@link SETTINGS} to every module of an app (global), once, from its root module. */
@Module({})
export class SettingsModule {
  static forRoot(settings: Settings): DynamicModule {
    return {
      module: SettingsModule,
      global: true,
      providers: [{ provide: SETTINGS, useValue: settings }],
      exports: [SETTINGS],
    };
  }
}
