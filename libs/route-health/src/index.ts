export { isCountedFailure, type AttemptOutcome } from './cooldown-rules';
export { memoryDeploymentLimiter, type DeploymentLimiter } from './deployment-limiter';
export type { DeploymentLimits } from './minute-window';
export { memoryTargetHealth, type HalfOpenClaim, type TargetHealth, type TargetHealthOptions } from './target-health';
export { redisTargetHealth, type RedisTargetHealthOptions } from './redis-target-health';
export { redisDeploymentLimiter, type RedisDeploymentLimiterOptions } from './redis-deployment-limiter';
