import { Router } from 'express';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { guardrailRoutes as specs } from '@sbc/api';
import { DetectorSet, type DetectorSpec } from '@sbc/guardrails';
import type { Guardrail, GuardrailService } from '@sbc/proto/sbc/account/v1/guardrails_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Principal } from '../auth/authenticator';
import { holdsScopes, requireScopes, type Authorize } from '../auth/authorize';
import { mount } from '../http/mount';

const iso = (value: Timestamp | undefined) => (value ? timestampDate(value) : new Date(0)).toISOString();

/** A guardrail as the API shows it: its kind's settings at the top level, never its webhook secret. */
function renderGuardrail(guardrail: Guardrail | undefined): Record<string, unknown> {
  const g = guardrail!;
  return {
    id: g.id,
    object: 'guardrail',
    name: g.name,
    kind: g.kind,
    team_id: g.teamId ?? null,
    applies_to: g.appliesTo,
    ...(JSON.parse(g.configJson || '{}') as Record<string, unknown>),
    created_at: iso(g.createdAt),
    updated_at: iso(g.updatedAt),
  };
}

const SETTINGS = ['detectors', 'url', 'timeout_ms', 'fail', 'model', 'question', 'max_tokens'] as const;

/** The kind's settings among a body's fields. */
function settingsOf(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(SETTINGS.filter((key) => body[key] !== undefined).map((key) => [key, body[key]]));
}

/** A team's guardrails are its policy: changing them is changing the team, as PATCH /v1/teams/{id} needs. */
const TEAM_WRITE = "Changing a team's guardrails";

/**
 * The guardrail routes: stored by the account service (which checks every setting and who may see or change
 * what); the edge validates the shape, forwards and renders, and tests a detectors guardrail on a sample text
 * with the same library its model calls use.
 */
export function guardrailRoutes(deps: {
  authorize: Authorize;
  guardrails: RpcClientOf<typeof GuardrailService>;
}): Router {
  const router = Router();
  const { guardrails, authorize } = deps;
  /** Refuses a change to a team's guardrail by a caller without teams:write; reads the guardrail only then. */
  const checkTeamWrite = async (principal: Principal, id: string, requestId: string) => {
    if (holdsScopes(principal, ['teams:write'])) return;
    const reply = await guardrails.getGuardrail({ userId: principal.userId, guardrailId: id }, { requestId });
    if (reply.guardrail?.teamId) requireScopes(principal, ['teams:write'], TEAM_WRITE);
  };

  mount(router, specs.listGuardrails, authorize, async ({ principal, query, requestId }) => {
    const reply = await guardrails.listGuardrails({ userId: principal.userId, teamId: query.team_id }, { requestId });
    const data = reply.guardrails.map(renderGuardrail);
    return {
      status: 200,
      body: {
        object: 'list',
        data,
        has_more: false,
        first_id: (data[0]?.id as string | undefined) ?? null,
        last_id: (data.at(-1)?.id as string | undefined) ?? null,
      },
    };
  });

  mount(router, specs.createGuardrail, authorize, async ({ principal, body, rpc }) => {
    if (body.team_id !== undefined) requireScopes(principal, ['teams:write'], TEAM_WRITE);
    const reply = await guardrails.createGuardrail(
      {
        userId: principal.userId,
        teamId: body.team_id,
        name: body.name,
        kind: body.kind,
        configJson: JSON.stringify(settingsOf(body)),
        appliesTo: body.applies_to ?? [],
      },
      rpc,
    );
    const secret = reply.guardrail?.webhookSecret;
    return {
      status: 201,
      body: { ...renderGuardrail(reply.guardrail), ...(secret ? { webhook_secret: secret } : {}) },
    };
  });

  mount(router, specs.getGuardrail, authorize, async ({ principal, params, requestId }) => {
    const reply = await guardrails.getGuardrail({ userId: principal.userId, guardrailId: params.id }, { requestId });
    return { status: 200, body: renderGuardrail(reply.guardrail) };
  });

  mount(router, specs.updateGuardrail, authorize, async ({ principal, params, body, rpc, requestId }) => {
    await checkTeamWrite(principal, params.id, requestId);
    const settings = settingsOf(body);
    let configJson: string | undefined;
    if (Object.keys(settings).length > 0) {
      // The kind's settings are replaced whole in the store: the ones given are merged over the stored ones.
      const stored = await guardrails.getGuardrail({ userId: principal.userId, guardrailId: params.id }, { requestId });
      configJson = JSON.stringify({ ...(JSON.parse(stored.guardrail?.configJson || '{}') as object), ...settings });
    }
    const reply = await guardrails.updateGuardrail(
      {
        userId: principal.userId,
        guardrailId: params.id,
        name: body.name,
        configJson,
        appliesTo: body.applies_to && { values: body.applies_to },
      },
      rpc,
    );
    return { status: 200, body: renderGuardrail(reply.guardrail) };
  });

  mount(router, specs.deleteGuardrail, authorize, async ({ principal, params, rpc, requestId }) => {
    await checkTeamWrite(principal, params.id, requestId);
    await guardrails.deleteGuardrail({ userId: principal.userId, guardrailId: params.id }, rpc);
    return { status: 204 };
  });

  mount(router, specs.testGuardrail, authorize, async ({ principal, params, body, requestId }) => {
    const reply = await guardrails.getGuardrail({ userId: principal.userId, guardrailId: params.id }, { requestId });
    const config = JSON.parse(reply.guardrail?.configJson || '{}') as { detectors?: DetectorSpec[] };
    const verdict = new DetectorSet(config.detectors ?? []).apply(body.text);
    return {
      status: 200,
      body: {
        blocked: verdict.block !== undefined,
        blocked_by: verdict.block?.type ?? null,
        text: verdict.block ? body.text : verdict.text,
        redacted: [...new Set(verdict.redactions.map((finding) => finding.type))],
        logged: [...new Set(verdict.logs.map((finding) => finding.type))],
      },
    };
  });

  return router;
}
