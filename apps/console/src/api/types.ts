// The API's shapes, inferred from the very zod schemas the edge validates with and documents (libs/api);
// only types cross over, so no schema code ships to the browser.
import type { z } from 'zod';
import type { authRoutes, deviceRoutes, keyRoutes, listOf, upstreamRoutes, usageRoutes } from '@sbc/api';

type BodyOf<R extends { body?: z.ZodType }> = z.input<NonNullable<R['body']>>;
/** The list envelope of every account list (`listOf` in libs/api) around `T`. */
type ListOf<T extends z.ZodType> = z.output<ReturnType<typeof listOf<T>>>;

export type ConsoleSession = z.output<typeof authRoutes.ConsoleSession>;
export type SignInBody = BodyOf<typeof authRoutes.createConsoleSession>;
export type User = z.output<typeof authRoutes.User>;

export type UsageBreakdown = z.output<typeof usageRoutes.UsageBreakdown>;
export type UsageMetrics = z.output<typeof usageRoutes.UsageMetrics>;
export type UsageGeneration = z.output<typeof usageRoutes.UsageGeneration>;
export type UsageGenerationList = ListOf<typeof usageRoutes.UsageGeneration>;
export type UsageReport = z.output<typeof usageRoutes.UsageReport>;
export type Credits = z.output<typeof usageRoutes.Credits>;
export type Spend = z.output<typeof usageRoutes.Spend>;

export type CallerKey = z.output<typeof keyRoutes.CallerKey>;
export type CallerKeyList = ListOf<typeof keyRoutes.CallerKey>;
export type MintedKey = z.output<typeof keyRoutes.MintedCallerKey>;
export type CreateKeyBody = BodyOf<typeof keyRoutes.createKey>;
export type UpdateKeyBody = BodyOf<typeof keyRoutes.updateKey>;

export type Upstream = z.output<typeof upstreamRoutes.Upstream>;
export type UpstreamProbe = z.output<typeof upstreamRoutes.UpstreamProbe>;
export type UpstreamList = z.output<typeof upstreamRoutes.UpstreamList>;
export type UpstreamWithProbe = z.output<typeof upstreamRoutes.UpstreamWithProbe>;
export type CreateUpstreamBody = BodyOf<typeof upstreamRoutes.createUpstream>;
export type UpdateUpstreamBody = BodyOf<typeof upstreamRoutes.updateUpstream>;

export type Alias = z.output<typeof upstreamRoutes.Alias>;
export type AliasPutBody = BodyOf<typeof upstreamRoutes.putAlias>;

export type PairingDecision = z.output<typeof deviceRoutes.PairingDecision>;
