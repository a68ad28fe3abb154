import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { loadSimConfig, type SimConfig } from './config';
import { start, type RunningSim } from './main';
import type { SimDialect } from './server';

/** Test fixture: the real simulator on port 0, zero latency and unpaced, plus official SDK clients for it. */
export async function startSim(
  overrides: Partial<SimConfig> = {},
  dialects?: readonly SimDialect[],
): Promise<RunningSim> {
  const config = { ...loadSimConfig({}), port: 0, latencyMs: 0, tokensPerSecond: 0, logLevel: 'silent', ...overrides };
  return start(config, dialects ? { dialects } : {});
}

export function openAiClient(sim: RunningSim, options: { apiKey?: string; timeout?: number } = {}): OpenAI {
  return new OpenAI({
    apiKey: options.apiKey ?? 'sk-test',
    baseURL: `${sim.url}/v1`,
    maxRetries: 0,
    timeout: options.timeout,
  });
}

export function anthropicClient(sim: RunningSim, options: { apiKey?: string; timeout?: number } = {}): Anthropic {
  return new Anthropic({
    apiKey: options.apiKey ?? 'sk-ant-test',
    baseURL: sim.url,
    maxRetries: 0,
    timeout: options.timeout,
  });
}

/** A function tool in each dialect's spelling. */
export const weatherSchema = {
  type: 'object',
  properties: {
    location: { type: 'string' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer' },
  },
  required: ['location'],
};
export const weatherArguments = { location: 'simulated location', unit: 'celsius', days: 1 };
