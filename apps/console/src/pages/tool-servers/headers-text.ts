/**
 * The tool-server form's headers box: one `Name: value` per line, blank lines skipped. The API checks names and
 * values; this only splits the text, and names a line it cannot split so the person can fix it before sending.
 */
export function parseHeaderLines(text: string): { headers: Record<string, string> } | { error: string } {
  const headers: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (!name) return { error: `Line ${index + 1} is not "Name: value".` };
    headers[name] = line.slice(colon + 1).trim();
  }
  return { headers };
}
