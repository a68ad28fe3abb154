// The official OpenAI SDK (npm install openai): point baseURL at the gateway, use your caller key.
import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: `${process.env.SBC_BASE_URL ?? 'http://localhost:8080'}/v1`,
  apiKey: process.env.SBC_API_KEY,
});
const model = process.env.SBC_MODEL ?? 'house'; // or 'my-engine/<model>' for your custom endpoint

const completion = await client.chat.completions.create({
  model,
  messages: [{ role: 'user', content: 'Say hello' }],
});
console.log(completion.choices[0].message.content);

const response = await client.responses.create({ model, input: 'Say hello' });
console.log(response.output_text);
