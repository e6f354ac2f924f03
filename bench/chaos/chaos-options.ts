/** How big and how long a chaos run is, and which faults it injects. */
export interface ChaosOptions {
  profile: 'full' | 'short' | 'failover';
  /**
   * `all`: the mixed schedule below. `failover`: only a Postgres failover (docs/chaos.md,
   * "Postgres failover"), on a primary and a streaming standby behind a TCP proxy.
   */
  fault: 'all' | 'failover';
  /** How long no primary answers: from the primary's crash to the standby's promotion. */
  failoverDownMs: number;
  /**
   * How long Postgres stays down at its restart (0: started again at once). Longer than the
   * pollers' 10 s lease, every lease held at the stop runs out during the outage.
   */
  pgDownMs: number;
  tasks: number;
  /** Seconds over which tasks are submitted and faults injected; the drain comes after. */
  seconds: number;
  seed: number;
  /** How long the drain may take before unfinished tasks are reported as violations. */
  drainSeconds: number;
  pollerKills: number;
  pollerPauses: number;
  /** How long a paused poller stays stopped: longer than its lease, so others take its rows. */
  pauseMs: number;
  hangMs: number;
  /** Longest scripted job; cancel targets run far longer so the cancel always lands first. */
  maxJobMs: number;
  cancelJobMs: number;
}

// The short profile must fit `npm test` on a 2-core box (about 60 s of run, then the drain);
// the full one is the "few thousand tasks" of issue 9.
const PROFILES: Record<ChaosOptions['profile'], Omit<ChaosOptions, 'seed'>> = {
  full: {
    profile: 'full',
    fault: 'all',
    failoverDownMs: 0,
    // Past the lease: held calls, call ends and handle writes wait it out under their own token
    // (docs/leases.md, "A call's end"), and the lease audit checks what lands late.
    pgDownMs: 14_000,
    tasks: 2000,
    seconds: 150,
    drainSeconds: 120,
    pollerKills: 6,
    pollerPauses: 3,
    pauseMs: 14_000,
    hangMs: 15_000,
    maxJobMs: 8000,
    cancelJobMs: 90_000,
  },
  short: {
    profile: 'short',
    fault: 'all',
    failoverDownMs: 0,
    pgDownMs: 0,
    tasks: 150,
    seconds: 30,
    drainSeconds: 60,
    pollerKills: 2,
    pollerPauses: 1,
    pauseMs: 13_000,
    hangMs: 8000,
    maxJobMs: 4000,
    cancelJobMs: 60_000,
  },
  // One fault in the middle of 45 s of submits: enough tasks of every contract in flight when
  // the primary dies, and a run of about two minutes with its drain.
  failover: {
    profile: 'failover',
    fault: 'failover',
    // What an orchestrator takes to notice and promote is seconds (Patroni's loop, CloudNativePG's
    // probes): long enough that every process meets the outage, short enough to end in a lease.
    failoverDownMs: 3000,
    pgDownMs: 0,
    tasks: 400,
    seconds: 45,
    drainSeconds: 60,
    pollerKills: 0,
    pollerPauses: 0,
    pauseMs: 0,
    hangMs: 0,
    maxJobMs: 8000,
    cancelJobMs: 60_000,
  },
};

/**
 * Parses `[--short | --fault failover] [--tasks N] [--seconds S] [--seed X]`; unknown flags are
 * an error.
 */
export function parseChaosOptions(argv: string[]): ChaosOptions {
  const usage = 'usage: chaos [--short | --fault failover] [--tasks N] [--seconds S] [--seed X]';
  const fault = argv.includes('--fault') ? argv[argv.indexOf('--fault') + 1] : undefined;
  if (fault !== undefined && fault !== 'failover')
    throw new Error(`${usage} (bad fault: ${fault})`);
  if (fault && argv.includes('--short')) throw new Error(`${usage} (--short or --fault, not both)`);
  const profile = fault ? 'failover' : argv.includes('--short') ? 'short' : 'full';
  const options: ChaosOptions = { ...PROFILES[profile], seed: Date.now() % 1_000_000 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--short') continue;
    if (flag === '--fault') {
      i++;
      continue;
    }
    const value = Number(argv[i + 1]);
    if (!['--tasks', '--seconds', '--seed'].includes(flag) || !Number.isFinite(value)) {
      throw new Error(`${usage} (bad: ${flag})`);
    }
    i++;
    if (flag === '--tasks') options.tasks = Math.max(1, Math.floor(value));
    if (flag === '--seconds') options.seconds = Math.max(10, value);
    if (flag === '--seed') options.seed = Math.floor(value);
  }
  return options;
}
