// Jest loads globalSetup/globalTeardown modules by their default export.
// eslint-disable-next-line no-restricted-syntax
export default async function globalTeardown(): Promise<void> {
  const started = (globalThis as { __sbcTestContainers?: { stop(): Promise<unknown> }[] }).__sbcTestContainers ?? [];
  await Promise.all(started.splice(0).map((container) => container.stop()));
}
