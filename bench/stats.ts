// Latency figures as every bench line prints them.

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `n=${samples.length}  p50=${percentile(sorted, 50).toFixed(2)} ms  p99=${percentile(sorted, 99).toFixed(2)} ms`;
}
