import type { FastifyInstance } from 'fastify';
import { TelemetryWriter } from '@erg/db';
import type { AppDeps, ExpensiveReadDeps } from './app';
import type { ApiMetrics } from './metrics';
import type { Offload } from './offload';
import { campaignRoutes } from './routes/campaigns';
import { clusterRoutes } from './routes/clusters';
import { healthRoutes } from './routes/health';
import { runRoutes } from './routes/runs';
import { suiteRoutes } from './routes/suites';
import { accessRoutes } from './routes/access';
import { webhookPolicyRoutes } from './routes/webhook-policy';
import { clusterPolicyRoutes } from './routes/cluster-policy';
import { telemetryRoutes } from './routes/telemetry';
import { eventRoutes } from './routes/events';
import { queueRoutes } from './routes/queue';
import { webRoutes } from './routes/web';
import { metricsRoutes } from './routes/metrics';
import { auditRoutes } from './routes/audit';

/** Every route of the API: /v1 (each with its access rule), health, the web app, /metrics. */
export async function registerRoutes(app: FastifyInstance, deps: AppDeps, offload: Offload, reads: ExpensiveReadDeps, metrics: ApiMetrics): Promise<void> {
  // Only the routes that validate large bodies (campaign and suite specs, telemetry) hand them to worker threads.
  const withOffload = { ...deps, offload };
  await app.register(healthRoutes(deps));
  await app.register(clusterRoutes(deps), { prefix: '/v1' });
  await app.register(campaignRoutes({ ...withOffload, ...reads }), { prefix: '/v1' });
  await app.register(runRoutes(deps), { prefix: '/v1' });
  await app.register(suiteRoutes(withOffload), { prefix: '/v1' });
  await app.register(accessRoutes(deps), { prefix: '/v1' });
  await app.register(webhookPolicyRoutes(deps), { prefix: '/v1' });
  await app.register(clusterPolicyRoutes(deps), { prefix: '/v1' });
  await app.register(queueRoutes(deps), { prefix: '/v1' });
  await app.register(eventRoutes(deps), { prefix: '/v1' });
  await app.register(auditRoutes(deps), { prefix: '/v1' });
  await app.register(webRoutes(deps.config.ERG_WEB_DIR));
  await app.register(telemetryRoutes({ ...withOffload, telemetry: deps.telemetry ?? new TelemetryWriter(deps.db, { maxPhaseNames: deps.config.ERG_MAX_PHASE_NAMES }), metrics }), { prefix: '/v1' });
  await app.register(metricsRoutes({ ...deps, metrics }));
}
