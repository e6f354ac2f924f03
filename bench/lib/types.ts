/** One figure of a benchmark, as it goes into the JSON and the docs table. */
export interface ResultRow {
  metric: string;
  /** Median over the runs (or the single measured value, said so in `unit`). */
  value: number | null;
  unit: string;
  /** The target from docs/benchmarks.md, in words, when this row carries one. */
  target?: string;
  met?: boolean;
}

export interface BenchResult {
  name: string;
  title: string;
  status: 'ok' | 'skipped';
  reason?: string;
  command: string;
  date: string;
  settings: Record<string, unknown>;
  rows: ResultRow[];
  /** Every run's raw figures, so the medians can be checked. */
  runs: unknown[];
}

export interface BenchContext {
  quick: boolean;
  /** Runs per configuration (the median is reported). */
  runs: number;
  /** A superuser URL of the server to benchmark on; benchmarks create their own databases. */
  adminUrl: string;
  command: string;
  log(message: string): void;
}

export interface Benchmark {
  name: string;
  title: string;
  run(ctx: BenchContext): Promise<Omit<BenchResult, 'name' | 'title' | 'command' | 'date'>>;
}
