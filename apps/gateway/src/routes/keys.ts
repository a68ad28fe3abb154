import type { GuardrailService } from '@sbc/proto/sbc/account/v1/guardrails_pb';
import { Router } from 'express';
import { keyRoutes as specs } from '@sbc/api';
import { ApiError } from '@sbc/errors';
import type { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import type { RpcClientOf } from '@sbc/rpc';
import { presetScopes, type Preset, type Scope } from '@sbc/scopes';
import { holdsScopes, type Authorize } from '../auth/authorize';
import type { Principal } from '../auth/authenticator';
import { mount } from '../http/mount';
import { renderCallerKey, renderKeyPage } from './caller-key';

/**
 * The scopes a body asks for: its list, or its preset's, or neither. A preset is what the caller may hold: a
 * non-operator's Full access leaves out builds:admin, while a list naming it is refused by the account service.
 */
function requestedScopes(
  body: { scopes?: Scope[]; preset?: Preset },
  principal: Principal,
): readonly Scope[] | undefined {
  return body.scopes ?? (body.preset ? presetScopes(body.preset, { operator: principal.operator }) : undefined);
}

/** Whom a key change is bounded by: the calling key, or nothing for a session or device token. */
function callerOf(principal: Principal) {
  return { userId: principal.userId, keyId: principal.key?.id };
}

const credits = (value: number | undefined) => (value === undefined ? undefined : BigInt(value));

/** `undefined` leaves a field alone; `null` clears it; a value sets it (the wrappers of UpdateKeyRequest). */
function patch<T, U>(value: T | null | undefined, convert: (value: T) => U): { value?: U } | undefined {
  return value === undefined ? undefined : { value: value === null ? undefined : convert(value) };
}

/** A key's own requests per minute must be within the service's ceiling (CONTRACTS "Budgets and limits"). */
function checkRpm(rpm: number | null | undefined, ceiling: number): void {
  if (typeof rpm === 'number' && rpm > ceiling)
    throw ApiError.invalid([
      { path: 'rpm', code: 'too_big', message: `rpm is ${rpm}; the service allows a key at most ${ceiling} a minute.` },
    ]);
}

/** The spec's Keys routes; the account service owns the keys and refuses any key wider than the caller. */
export function keyRoutes(deps: {
  authorize: Authorize;
  account: RpcClientOf<typeof AccountService>;
  guardrails: RpcClientOf<typeof GuardrailService>;
  rateLimitPerMinute: number;
}): Router {
  const router = Router();

  mount(router, specs.listKeys, deps.authorize, async ({ principal, query, requestId }) => {
    const reply = await deps.account.listKeys(
      { userId: principal.userId, limit: query.limit, afterId: query.after_id, beforeId: query.before_id },
      { requestId },
    );
    return { status: 200, body: renderKeyPage(reply.keys, reply.hasMore) };
  });

  mount(router, specs.createKey, deps.authorize, async ({ principal, body, rpc }) => {
    checkRpm(body.rpm, deps.rateLimitPerMinute);
    const reply = await deps.account.createKey(
      {
        caller: callerOf(principal),
        name: body.name,
        scopes: [...(requestedScopes(body, principal) ?? presetScopes('gateway', { operator: principal.operator }))],
        allowedModels: body.allowed_models ? { values: body.allowed_models } : undefined,
        allowedTools: body.allowed_tools ? { values: body.allowed_tools } : undefined,
        dailyLimitCredits: credits(body.daily_limit_tokens),
        monthlyLimitCredits: credits(body.monthly_limit_tokens),
        route: body.route,
        mode: body.mode,
        incognito: body.incognito,
        cacheTtlS: body.cache_ttl_s,
        cacheTools: body.cache_tools,
        deviceId: body.device_id,
        orgId: body.org_id,
        rpm: credits(body.rpm),
        tpm: credits(body.tpm),
      },
      rpc,
    );
    return { status: 201, body: { ...renderCallerKey(reply.key!), key: reply.secret } };
  });

  mount(router, specs.getCallingKey, deps.authorize, async ({ principal }) => {
    if (!principal.key)
      throw new ApiError(
        'invalid_request',
        `whoami describes a caller key; this credential is a ${principal.kind} token, not one.`,
      );
    return { status: 200, body: renderCallerKey(principal.key) };
  });

  mount(router, specs.updateKey, deps.authorize, async ({ principal, params, body, rpc }) => {
    checkRpm(body.rpm, deps.rateLimitPerMinute);
    const scopes = requestedScopes(body, principal);
    // The guardrail ids are checked and set first: a bad one is a 400 before anything else changes.
    if (body.guardrails)
      await deps.guardrails.setKeyGuardrails(
        {
          userId: principal.userId,
          keyId: params.id,
          guardrailIds: body.guardrails,
          mayChangeTeam: holdsScopes(principal, ['teams:write']),
          callerKeyId: principal.key?.id,
        },
        rpc,
      );
    const reply = await deps.account.updateKey(
      {
        caller: callerOf(principal),
        keyId: params.id,
        name: body.name,
        scopes: scopes ? { values: [...scopes] } : undefined,
        allowedModels: patch(body.allowed_models, (values) => ({ values })),
        allowedTools: patch(body.allowed_tools, (values) => ({ values })),
        dailyLimitCredits: patch(body.daily_limit_tokens, BigInt),
        monthlyLimitCredits: patch(body.monthly_limit_tokens, BigInt),
        route: body.route,
        mode: body.mode,
        incognito: body.incognito,
        cacheTtlS: body.cache_ttl_s === null ? 0 : body.cache_ttl_s,
        cacheTools: body.cache_tools,
        deviceId: patch(body.device_id, (id) => id),
        rpm: patch(body.rpm, BigInt),
        tpm: patch(body.tpm, BigInt),
      },
      rpc,
    );
    return { status: 200, body: renderCallerKey(reply.key!) };
  });

  mount(router, specs.revokeKey, deps.authorize, async ({ principal, params, rpc }) => {
    const reply = await deps.account.revokeKey(
      { userId: principal.userId, keyId: params.id, callerKeyId: principal.key?.id },
      rpc,
    );
    return { status: 200, body: renderCallerKey(reply.key!) };
  });

  return router;
}
