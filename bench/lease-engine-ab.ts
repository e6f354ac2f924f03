/**
 * The lease engine's fair and due-order burn-downs, two or more builds side by side in one run
 * (A/B): `node dist/bench/lease-engine-ab.js NAME=PATH NAME=PATH …`, each PATH a build's dist/
 * (another worktree's, or a copy kept beside this one). One database; every round runs each
 * build's `lease-shipped-2` and `lease-due-order-2` of `lease-engine` (burnLease, the same load,
 * check and timing), the order turned one place each round, `AB_ROUNDS` (8) rounds of `AB_ROWS`
 * (5,000) rows. Prints each round's rates and fair / due-order ratios, then each build's medians.
 * Why: one quick run's fair / due-order ratio moves by up to 0.1, more than most changes do
 * (docs/benchmarks.md, "Claims in the lease-engine run").
 */
import { join, resolve } from 'node:path';
import { createBenchDatabase } from './lib/bench-db';
import { median, round } from './lib/stats';
import { Config, SHIPPED, burnLease } from './lease-engine.bench';

interface Cell {
  build: string;
  claim: 'fair' | 'due';
  config: Config;
  rates: number[];
}

async function main(): Promise<void> {
  const builds = process.argv.slice(2).map((arg) => {
    const [name, dist] = arg.split('=', 2);
    if (!name || !dist) throw new Error(`expected NAME=PATH (a build's dist/), got "${arg}"`);
    return { name, worker: join(resolve(dist), 'bench', 'workers', 'lease-burn.worker.js') };
  });
  if (builds.length === 0) throw new Error("name at least one build: NAME=PATH (a build's dist/)");
  const rounds = Number(process.env.AB_ROUNDS ?? 8);
  const rows = Number(process.env.AB_ROWS ?? 5_000);
  const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

  const cells: Cell[] = builds.flatMap(({ name, worker }) =>
    (['fair', 'due'] as const).map((claim) => ({
      build: name,
      claim,
      rates: [],
      config: {
        key: `${name}-${claim}`,
        label: `${name}, ${claim === 'fair' ? 'fair-share' : 'due-order'} claim, 2 processes`,
        kind: 'lease',
        processes: 2,
        env: claim === 'fair' ? SHIPPED : { ...SHIPPED, CLAIM_FAIR_SHARE: 'false' },
        worker,
      },
    })),
  );
  const rateOf = (build: string, claim: Cell['claim']): number[] =>
    cells.find((cell) => cell.build === build && cell.claim === claim)!.rates;
  const bench = await createBenchDatabase(adminUrl, 'lease_ab');
  try {
    for (let run = 0; run < rounds; run++) {
      const shift = run % cells.length;
      for (const cell of [...cells.slice(shift), ...cells.slice(0, shift)]) {
        cell.rates.push((await burnLease(bench, cell.config, rows)).rate);
      }
      const line = builds.map(({ name }) => {
        const [fair, due] = [rateOf(name, 'fair')[run], rateOf(name, 'due')[run]];
        return `${name} ${Math.round(fair)} / ${Math.round(due)} rows/s = ${round(fair / due)}`;
      });
      console.log(`round ${run + 1}/${rounds}, fair / due order: ${line.join('   ')}`);
    }
  } finally {
    await bench.drop();
  }
  for (const { name } of builds) {
    const fair = rateOf(name, 'fair');
    const due = rateOf(name, 'due');
    const ratio = median(fair.map((rate, i) => rate / due[i]));
    console.log(
      `${name}: median fair ${Math.round(median(fair))} rows/s, due order ${Math.round(median(due))} rows/s, fair / due order ${round(ratio)} (median of the rounds)`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
