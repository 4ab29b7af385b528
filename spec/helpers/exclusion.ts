/** One critical-section entry or exit, stamped with a clock shared by every process on the host. */
export interface SectionEvent {
  worker: string;
  kind: 'enter' | 'exit';
  /** Epoch ms with sub-ms precision: `performance.timeOrigin + performance.now()`. */
  at: number;
}

/** What the checker found. */
export interface ExclusionReport {
  sections: number;
  /** Sections that began before another worker's section had ended. */
  overlaps: number;
  /** Increments made under the lock that the shared counter does not show. */
  lostUpdates: number;
}

/**
 * Checks a run for mutual exclusion: pairs each worker's enter/exit events into sections, counts
 * the sections that start inside another worker's section, and compares the increments made with
 * the counter's final value. A section whose exit was never logged (a killed worker) is ignored.
 */
export function checkExclusion(events: readonly SectionEvent[], finalCounter: number): ExclusionReport {
  const open = new Map<string, number>();
  const sections: Section[] = [];
  for (const event of [...events].sort((a, b) => a.at - b.at)) {
    if (event.kind === 'enter') {
      open.set(event.worker, event.at);
    } else {
      const from = open.get(event.worker);
      if (from !== undefined) sections.push({ worker: event.worker, from, to: event.at });
      open.delete(event.worker);
    }
  }
  return { sections: sections.length, overlaps: countOverlaps(sections), lostUpdates: sections.length - finalCounter };
}

/** A span of time one worker spent in its critical section (epoch ms). */
export interface Section {
  worker: string;
  from: number;
  to: number;
}

/** Sections that begin before another worker's section has ended (give it the sections of one lock). */
export function countOverlaps(sections: readonly Section[]): number {
  let overlaps = 0;
  let latest = { worker: '', to: -Infinity };
  for (const section of [...sections].sort((a, b) => a.from - b.from)) {
    if (section.from < latest.to && section.worker !== latest.worker) overlaps += 1;
    if (section.to > latest.to) latest = section;
  }
  return overlaps;
}
