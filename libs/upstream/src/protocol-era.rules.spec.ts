import { TASKS_EXTENSION } from '@app/wire';
import { speaksStateless } from './protocol-era.rules';

const TASKS = { extensions: { [TASKS_EXTENSION]: {} } };

describe('speaksStateless', () => {
  it('serves on the 2026-07-28 side when the tasks extension is named', () => {
    expect(speaksStateless({ capabilities: TASKS })).toBe(true);
    expect(
      speaksStateless({ supportedVersions: ['2026-07-28', '2025-11-25'], capabilities: TASKS }),
    ).toBe(true);
  });

  it('serves on the 2026-07-28 side when no listed version can open a session', () => {
    // The official SDK v2 answers this way, whether or not it also serves 2025-11-25.
    expect(speaksStateless({ supportedVersions: ['2026-07-28'], capabilities: {} })).toBe(true);
    expect(speaksStateless({ supportedVersions: ['2026-07-28', '2027-01-01'] })).toBe(true);
  });

  it('leaves a server that also opens sessions, and has no extension, to the session side', () => {
    expect(speaksStateless({ supportedVersions: ['2026-07-28', '2025-11-25'] })).toBe(false);
    expect(speaksStateless({ supportedVersions: ['2026-07-28', '2025-06-18'] })).toBe(false);
    expect(speaksStateless({ capabilities: {} })).toBe(false);
  });

  it('never serves a server that does not list 2026-07-28 among the versions it lists', () => {
    expect(speaksStateless({ supportedVersions: ['2027-01-01'], capabilities: TASKS })).toBe(false);
    expect(speaksStateless({ supportedVersions: [] })).toBe(false);
  });
});
