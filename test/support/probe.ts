// Test support: an availability probe that keeps asking "is there a live backend?" while an
// operation runs elsewhere, and counts the answers that were no. It synchronises on nothing: each
// check is a request of its own, one after another, until it is stopped.
export interface AvailabilityProbe {
  /** Stops after the check in flight and says how many checks ran and how many found no backend. */
  stop(): Promise<{ checks: number; outages: number; firstOutage?: string }>;
}

export function availabilityProbe(check: () => Promise<boolean>): AvailabilityProbe {
  let running = true;
  let checks = 0;
  let outages = 0;
  let firstOutage: string | undefined;
  const loop = (async () => {
    while (running) {
      checks += 1;
      let live = false;
      try {
        live = await check();
      } catch (error) {
        firstOutage ??= error instanceof Error ? error.message : String(error);
      }
      if (!live) {
        outages += 1;
        firstOutage ??= `check ${checks}`;
      }
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { checks, outages, ...(firstOutage ? { firstOutage } : {}) };
    },
  };
}
