import type { Response } from 'express';

/**
 * A file a run wrote, answered from the API origin: its content is whatever a model chose to write, so it goes
 * out as plain text the browser must not sniff, as an attachment, under a CSP that sandboxes it and loads
 * nothing. Even opened directly, it can never run as a page of this origin.
 */
export function sendWorkspaceFile(res: Response, path: string, content: string): void {
  // RFC 8187: everything outside attr-char percent-encoded (encodeURIComponent leaves ' ( ) * as they are).
  const name = encodeURIComponent(path.split('/').at(-1) || 'file').replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  res
    .status(200)
    .setHeader('content-type', 'text/plain; charset=utf-8')
    .setHeader('x-content-type-options', 'nosniff')
    .setHeader('content-security-policy', "default-src 'none'; sandbox")
    .setHeader('content-disposition', `attachment; filename*=UTF-8''${name}`)
    .setHeader('cache-control', 'private, no-store')
    .end(content);
}
