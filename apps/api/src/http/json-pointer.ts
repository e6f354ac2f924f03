/**
 * A key as one reference token of a JSON Pointer (RFC 6901: `~` as `~0`, `/` as `~1`). Every
 * body error names its place this way (`errors[].path`, docs/api.md, "Errors").
 */
export function pointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
