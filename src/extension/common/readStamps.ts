/**
 * Which files changed since they were last read. File watchers can miss events (a remote host
 * under load, a watcher still starting when the first write lands), so the workspace also looks
 * at the files it read. The baseline is the moment of the read, not the first look: a write
 * between the two would otherwise become the baseline and never be noticed.
 */
import { fileStamp } from '../../core/index';

export class ReadStamps {
  private readonly stamps = new Map<string, string>();

  /** Call just before reading `file`, so a write during the read is seen as a change. */
  markRead(file: string): void {
    this.stamps.set(file, fileStamp(file));
  }

  /** Files that changed since they were read; each change is reported once. */
  changed(): string[] {
    const out: string[] = [];
    for (const [file, before] of this.stamps) {
      const now = fileStamp(file);
      if (now === before) continue;
      this.stamps.set(file, now);
      out.push(file);
    }
    return out;
  }
}
