import { ConfigError } from '@app/common';

/**
 * Typed field access over one JSON object of the config file. Messages say where
 * (`server "x": taskToolsets[0]`), which field and which rule; never the value.
 */
export class FieldReader {
  private readonly obj: Record<string, unknown>;

  constructor(
    value: unknown,
    readonly where: string,
  ) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new ConfigError(`${where}: must be an object`);
    }
    this.obj = value as Record<string, unknown>;
  }

  onlyKeys(allowed: string[]): void {
    for (const key of Object.keys(this.obj)) {
      if (!allowed.includes(key)) throw new ConfigError(`${this.where}: unknown key "${key}"`);
    }
  }

  string(key: string): string {
    const value = this.obj[key];
    if (typeof value !== 'string' || value.length === 0)
      this.fail(key, 'is required and must be a non-empty string');
    return value;
  }

  optionalString(key: string): string | undefined {
    return this.obj[key] === undefined ? undefined : this.string(key);
  }

  enumValue<T extends string>(key: string, allowed: readonly T[]): T {
    const value = this.obj[key];
    if (typeof value !== 'string' || !allowed.includes(value as T)) {
      this.fail(key, `must be one of ${allowed.join(', ')}`);
    }
    return value as T;
  }

  optionalEnum<T extends string>(key: string, allowed: readonly T[]): T | undefined {
    return this.obj[key] === undefined ? undefined : this.enumValue(key, allowed);
  }

  int(key: string, fallback: number, min: number): number {
    return this.optionalInt(key, min) ?? fallback;
  }

  optionalInt(key: string, min: number): number | undefined {
    const value = this.obj[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
      this.fail(key, `must be an integer >= ${min}`);
    }
    return value;
  }

  bool(key: string, fallback: boolean): boolean {
    const value = this.obj[key];
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') this.fail(key, 'must be true or false');
    return value;
  }

  stringArray(key: string): string[] {
    const value = this.obj[key];
    if (value === undefined) return [];
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
      this.fail(key, 'must be an array of strings');
    }
    return value as string[];
  }

  stringMap(key: string): Record<string, string> {
    const value = this.optionalObject(key);
    if (value === undefined) return {};
    for (const [name, item] of Object.entries(value)) {
      if (typeof item !== 'string') this.fail(`${key}.${name}`, 'must be a string');
    }
    return value as Record<string, string>;
  }

  object(key: string): Record<string, unknown> {
    const value = this.optionalObject(key);
    if (value === undefined) this.fail(key, 'is required and must be an object');
    return value;
  }

  optionalObject(key: string): Record<string, unknown> | undefined {
    const value = this.obj[key];
    if (value === undefined) return undefined;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.fail(key, 'must be an object');
    }
    return value as Record<string, unknown>;
  }

  array(key: string): unknown[] {
    const value = this.obj[key];
    if (value === undefined) return [];
    if (!Array.isArray(value)) this.fail(key, 'must be an array');
    return value as unknown[];
  }

  private fail(key: string, rule: string): never {
    throw new ConfigError(`${this.where}: ${key} ${rule}`);
  }
}
