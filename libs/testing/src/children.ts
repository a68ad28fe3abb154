import type { ChildProcessWithoutNullStreams } from 'node:child_process';

/** A process a test started: its output so far and its exit, for failure messages and stops. */
export interface Child {
  app: string;
  process: ChildProcessWithoutNullStreams;
  output: () => string;
  exited: Promise<number | null>;
}

export function collect(app: string, child: ChildProcessWithoutNullStreams): Child {
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { app, process: child, output: () => output, exited };
}

/** Polls `url` until it answers 2xx; fails with the child's output if it exits or the time runs out. */
export async function waitReady(child: Child, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.process.exitCode !== null)
      throw new Error(`${child.app} exited ${child.process.exitCode}:\n${child.output()}`);
    if (
      await fetch(url).then(
        (res) => res.ok,
        () => false,
      )
    )
      return;
    if (Date.now() > deadline) throw new Error(`${child.app} not ready at ${url}:\n${child.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
