"""How well ``--shard K/N`` balances a large run: a simulation.

10,000 synthetic targets with a heavy-tailed duration distribution, like a real op
library (most under a second, a few minutes long), are split into 8, 64 and 256 shards
by gradcheck's own split (:func:`gradcheck.frontend.shards.assign`):

- by recorded durations: the recorded seconds are those of an earlier run, each off from
  this run's by a random factor (log-normal noise, ``--noise``, 20% by default), as a
  run's timings are never exactly the last run's;
- without durations: dealt out evenly by count, in hash order.

For each, the makespan (the largest shard's seconds, what a CI matrix waits for) is
compared with the ideal, total / N, and with the lower bound no split can beat,
max(total / N, the longest target).

    python benchmarks/shard_balance.py [--targets 10000] [--seed 0] [--noise 0.2]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gradcheck.frontend.shards import assign


def durations(count: int, rng: random.Random, *, long_tail: float) -> list[float]:
    """Seconds per target: 94% short (log-normal around 0.3 s), 5.9% a few seconds,
    and ``long_tail`` of them minutes long (0.1%: 10 of 10,000)."""
    out = []
    for _ in range(count):
        u = rng.random()
        if u < long_tail:
            out.append(rng.uniform(60.0, 180.0))
        elif u < 0.06:
            out.append(rng.lognormvariate(1.2, 0.6))  # ~3 s
        else:
            out.append(rng.lognormvariate(-1.2, 0.7))  # ~0.3 s
    return out


def simulate(count: int, shards: int, seconds: list[float], recorded: dict[str, float] | None):
    names = [f"lib.ops:Op{i}" for i in range(count)]
    parts = assign(names, shards, recorded)
    loads = [sum(seconds[i] for i in part) for part in parts]
    total = sum(seconds)
    ideal = total / shards
    bound = max(ideal, max(seconds))
    return max(loads), ideal, bound


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--long-tail", type=float, default=0.001)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    seconds = durations(args.targets, rng, long_tail=args.long_tail)
    names = [f"lib.ops:Op{i}" for i in range(args.targets)]
    recorded = {n: s * rng.lognormvariate(0.0, args.noise) for n, s in zip(names, seconds)}
    total = sum(seconds)
    median = sorted(seconds)[len(seconds) // 2]
    short = sum(s < 1 for s in seconds) / len(seconds)
    print(
        f"{args.targets} targets, {total:,.0f} s in all; median {median:.2f} s, {short:.1%} "
        f"under 1 s, longest {max(seconds):.0f} s; recorded durations off by log-normal "
        f"noise sigma={args.noise}"
    )
    print("shards  ideal s  bound s  with durations: s, /ideal, /bound  without: s, /ideal")
    for shards in (8, 64, 256):
        with_d, ideal, bound = simulate(args.targets, shards, seconds, recorded)
        without, _, _ = simulate(args.targets, shards, seconds, None)
        print(
            f"{shards:>6}  {ideal:>7.1f}  {bound:>7.1f}  {with_d:>9.1f} {with_d / ideal:>6.3f}x "
            f"{with_d / bound:>6.3f}x  {without:>9.1f} {without / ideal:>6.3f}x"
        )


if __name__ == "__main__":
    main()
