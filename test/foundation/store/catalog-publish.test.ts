// Guards against one catalog entry the database refuses stopping the entries after it, and
// against a lone UTF-16 surrogate in a tool's description or schema making its entry unstorable.
import { Contract, defaultMcpExposure, type PublishedToolset } from '@app/common';
import { CatalogRepository } from '@app/persistence';
import { useTestDatabase } from '../../helpers/db';

const t = useTestDatabase();

function entry(name: string, extra: Partial<PublishedToolset> = {}): PublishedToolset {
  return {
    name,
    server: 'demo',
    contract: Contract.Ordinary,
    description: `toolset ${name}`,
    inputSchema: { type: 'object' },
    available: true,
    unavailableReason: null,
    mcp: defaultMcpExposure(name),
    deadlineSeconds: null,
    ...extra,
  };
}

it('publishes every entry the database takes, then names the ones it refused', async () => {
  const catalog = new CatalogRepository(t.db);
  const publishing = catalog.publish([
    // A deadline that is no integer: the database refuses the row (22P02).
    entry('refused', { deadlineSeconds: 1.5 }),
    entry('cut', {
      description: 'cut emoji \ud83d',
      inputSchema: { type: 'object', description: 'cut \ud83d' },
    }),
    entry('after'),
  ]);
  await expect(publishing).rejects.toThrow('1 of 3 toolsets not published (refused)');
  const rows = await t.db.query<{ name: string; description: string; input_schema: unknown }>(
    `SELECT name, description, input_schema FROM toolsets ORDER BY name`,
  );
  expect(rows).toEqual([
    { name: 'after', description: 'toolset after', input_schema: { type: 'object' } },
    {
      name: 'cut',
      description: 'cut emoji \uFFFD',
      input_schema: { type: 'object', description: 'cut \uFFFD' },
    },
  ]);
});
