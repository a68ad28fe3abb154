// The Vercel AI SDK (npm install ai @ai-sdk/openai): an OpenAI provider whose baseURL is the gateway.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';

const gateway = createOpenAI({
  baseURL: `${process.env.SBC_BASE_URL ?? 'http://localhost:8080'}/v1`,
  apiKey: process.env.SBC_API_KEY,
});
const model = gateway.chat(process.env.SBC_MODEL ?? 'house'); // or 'my-engine/<model>'

const { text } = await generateText({ model, prompt: 'Say hello' });
console.log(text);

const stream = streamText({ model, prompt: 'Say hello, slowly' });
for await (const part of stream.textStream) process.stdout.write(part);
console.log();
