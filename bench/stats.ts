// Latency figures as every bench line prints them.

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** The median of some samples, in any order (p50 as `percentile` takes it). */
export function median(samples: number[]): number {
  return percentile(
    [...samples].sort((a, b) => a - b),
    50,
  );
}

export function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `n=${samples.length}  p50=${percentile(sorted, 50).toFixed(2)} ms  p99=${percentile(sorted, 99).toFixed(2)} ms`;
}
