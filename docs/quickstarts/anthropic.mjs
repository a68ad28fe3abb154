// The official Anthropic SDK (npm install @anthropic-ai/sdk): the gateway speaks Messages at /v1/messages.
import Anthropic from '@anthropic-ai/sdk';

const client = new Anthropic({
  baseURL: process.env.SBC_BASE_URL ?? 'http://localhost:8080',
  apiKey: process.env.SBC_API_KEY,
});

const message = await client.messages.create({
  model: process.env.SBC_MODEL ?? 'house', // or 'my-engine/<model>' for your custom endpoint
  max_tokens: 256,
  messages: [{ role: 'user', content: 'Say hello' }],
});
console.log(message.content.find((block) => block.type === 'text')?.text);
