/**
 * What a model route writes its answer through: an Express response over HTTP/1.1, or the HTTP/2 response of
 * the TLS listener (tls-listener.ts), which adds the two Express methods the routes use.
 */
export interface SimResponse {
  status(code: number): this;
  json(body: unknown): unknown;
  setHeader(name: string, value: string | number | readonly string[]): unknown;
  getHeader(name: string): unknown;
  flushHeaders(): void;
  write(chunk: string): boolean;
  end(): unknown;
  /** Drops the connection (HTTP/1.1) or resets the stream (HTTP/2) without an answer, as a dying server does. */
  destroy(): unknown;
  once(event: 'close' | 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
  readonly destroyed: boolean;
  readonly writableFinished: boolean;
}
