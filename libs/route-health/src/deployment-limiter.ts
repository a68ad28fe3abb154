import { countInLastMinute, fitsLimits, minuteCellOf, type DeploymentLimits, type MinuteCell } from './minute-window';

/**
 * Per-deployment requests and tokens per minute (`PROVIDER_ENGINES` deployments with `rpm` / `tpm`). A deployment
 * at its limit is skipped, never waited for.
 */
export interface DeploymentLimiter {
  /** Counts one request when it fits and answers true; false = at its limit, skip the deployment. No I/O. */
  tryTake(key: string, limits: DeploymentLimits, now?: number): boolean;
  /** Adds a finished call's tokens (input + output) to the deployment's minute. No I/O. */
  addTokens(key: string, tokens: number, now?: number): void;
  close(): Promise<void>;
}

/** A key's cells: the two minutes the window can reach. */
interface KeyCells {
  previous?: MinuteCell;
  current?: MinuteCell;
}

/** The cell of `now` in `cells`, shifting the window forward when a minute has turned. */
function cellAt(cells: KeyCells, now: number): MinuteCell {
  const cell = minuteCellOf(now);
  if (cells.current?.cell === cell) return cells.current;
  if (cells.current && cells.current.cell > cell) {
    // A clock that stepped back: count into the cell the window already has rather than rewrite history.
    return cells.current;
  }
  cells.previous = cells.current?.cell === cell - 1 ? cells.current : undefined;
  cells.current = { cell, requests: 0, tokens: 0 };
  return cells.current;
}

export function validTokens(tokens: number): number {
  return Number.isFinite(tokens) && tokens > 0 ? Math.floor(tokens) : 0;
}

/** One process's counts, for embedded mode and a single edge. */
export function memoryDeploymentLimiter(): DeploymentLimiter {
  const keys = new Map<string, KeyCells>();
  const cellsOf = (key: string): KeyCells => {
    let cells = keys.get(key);
    if (!cells) keys.set(key, (cells = {}));
    return cells;
  };
  return {
    tryTake(key, limits, now = Date.now()) {
      const cells = cellsOf(key);
      const cell = cellAt(cells, now);
      if (!fitsLimits(countInLastMinute(cells, now), limits)) return false;
      cell.requests += 1;
      return true;
    },
    addTokens(key, tokens, now = Date.now()) {
      cellAt(cellsOf(key), now).tokens += validTokens(tokens);
    },
    async close() {
      keys.clear();
    },
  };
}
