/**
 * The ids seen most recently (request ids a ledger wrote, or a budget store settled). A retry
 * comes back within minutes, so only the latest ids need checking; keeping every id ever seen
 * would grow without end in a long-running gateway (a day at 100 requests/s is 8.6 million ids).
 *
 * Two generations: when the newer one is full, it becomes the older one and the oldest ids are
 * dropped all at once, so between `limit` and twice `limit` ids are kept. (Evicting one id at a
 * time through `set.values().next()` walked over every id deleted before it: a million records
 * took 40 s to open.)
 */
export class RecentIds {
  private newer = new Set<string>();
  private older = new Set<string>();

  constructor(private readonly limit = 200_000) {}

  has(id: string): boolean {
    return this.newer.has(id) || this.older.has(id);
  }

  add(id: string): void {
    if (this.newer.size >= this.limit) {
      this.older = this.newer;
      this.newer = new Set();
    }
    this.newer.add(id);
  }

  /** Up to `count` of the newest ids, oldest first. */
  latest(count: number): string[] {
    const newer = [...this.newer];
    if (newer.length >= count) return newer.slice(newer.length - count);
    const older = [...this.older];
    return [...older.slice(Math.max(0, older.length - (count - newer.length))), ...newer];
  }
}
