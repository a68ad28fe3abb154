import { ConfigError } from '@sbc/config';
import { startTracingFromEnv } from '@sbc/telemetry';

/** Set by tools/build-app.mjs to the app a bundle was built for; undefined when running from sources. */
declare const SBC_BUNDLE_ENTRY: string | undefined;

/**
 * True only in the bundle built for `app`. Every app's main.ts is also bundled into apps/embedded, where
 * `require.main === module` would be true for all of them; the build-time constant tells them apart.
 */
export function isBundleEntry(app: string): boolean {
  return typeof SBC_BUNDLE_ENTRY !== 'undefined' && SBC_BUNDLE_ENTRY === app;
}

export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Runs an app as a process: parse config (a bad variable prints every problem and exits 1), start, and on
 * the first SIGTERM/SIGINT stop gracefully and exit 0. A second signal exits at once with 1.
 * `<app> migrate` applies an app's database migrations and exits instead (0 when done, 1 on failure);
 * `<app> <command> [args…]` runs one of the app's own operator `commands` and exits with the code it gives.
 */
export function runService<Config>(options: {
  name: string;
  load: () => Config;
  start: (config: Config) => Promise<Stoppable>;
  /** Present for apps that own a database. */
  migrate?: (config: Config) => Promise<void>;
  /** Operator commands by name: each gets the config and the arguments after its name, and resolves to an exit code. */
  commands?: Record<string, (config: Config, args: string[]) => Promise<number>>;
}): void {
  const command = process.argv[2];
  const own = command === undefined ? undefined : options.commands?.[command];
  if (command !== undefined && command !== 'migrate' && !own) {
    const usage = ['migrate', ...Object.keys(options.commands ?? {})].join('|');
    process.stderr.write(`${options.name}: unknown command "${command}" (usage: main.js [${usage}])\n`);
    process.exit(2);
  }
  let config: Config;
  try {
    config = options.load();
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(1);
  }
  if (own) {
    own(config, process.argv.slice(3)).then(
      (code) => process.exit(code),
      (error: unknown) => {
        process.stderr.write(
          `${options.name}: ${command} failed: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        process.exit(1);
      },
    );
    return;
  }
  if (command === 'migrate') {
    if (!options.migrate) {
      process.stderr.write(`${options.name}: has no database, nothing to migrate\n`);
      process.exit(2);
    }
    options.migrate(config).then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(
          `${options.name}: migration failed: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        process.exit(1);
      },
    );
    return;
  }
  // Spans go out over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT names a collector; the last ones on shutdown.
  const tracing = startTracingFromEnv(options.name, process.env);
  options.start(config).then(
    (running) => {
      let signalled = false;
      const shutdown = (signal: NodeJS.Signals) => {
        if (signalled) {
          process.stderr.write(`${options.name}: second ${signal}, exiting now\n`);
          process.exit(1);
        }
        signalled = true;
        const stopped = running.stop().then(() => tracing?.shutdown());
        stopped.then(
          () => process.exit(0),
          (error: unknown) => {
            process.stderr.write(`${options.name}: shutdown failed: ${String(error)}\n`);
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', shutdown);
      process.on('SIGINT', shutdown);
    },
    (error: unknown) => {
      process.stderr.write(
        `${options.name}: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
