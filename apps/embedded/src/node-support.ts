/**
 * When each Node.js release line stops getting security fixes, from the Node.js release schedule as of
 * 2026-11-25 (lines 25 and 26 by their planned dates). A line older than the oldest listed has ended; a
 * line newer than the newest listed is too new to have ended.
 */
const END_OF_LIFE: Record<number, string> = {
  20: '2026-04-30',
  21: '2024-06-01',
  22: '2027-04-30',
  23: '2025-06-01',
  24: '2028-04-30',
  25: '2026-06-01',
  26: '2029-04-30',
};
const OLDEST_LISTED = Math.min(...Object.keys(END_OF_LIFE).map(Number));

/** One line for `npm start` to print when the running Node gets no security fixes any more; else undefined. */
export function endOfLifeWarning(nodeVersion: string, today: Date): string | undefined {
  const major = Number(nodeVersion.replace(/^v/, '').split('.')[0]);
  const ended = END_OF_LIFE[major];
  if (major >= OLDEST_LISTED && (ended === undefined || today < new Date(`${ended}T00:00:00Z`))) return undefined;
  const since = ended ? ` on ${ended}` : '';
  return (
    `warning: Node.js ${nodeVersion.replace(/^v?/, 'v')} reached end of life${since} and gets no security fixes; ` +
    `run Node.js 24 LTS (README, "Node versions")`
  );
}
