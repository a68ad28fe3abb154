// LangChain JS (npm install @langchain/openai @langchain/core): ChatOpenAI with the gateway as its baseURL.
import { ChatOpenAI } from '@langchain/openai';

const chat = new ChatOpenAI({
  model: process.env.SBC_MODEL ?? 'house', // or 'my-engine/<model>' for your custom endpoint
  apiKey: process.env.SBC_API_KEY,
  configuration: { baseURL: `${process.env.SBC_BASE_URL ?? 'http://localhost:8080'}/v1` },
});

const reply = await chat.invoke('Say hello');
console.log(reply.content);

for await (const chunk of await chat.stream('Say hello, slowly')) process.stdout.write(String(chunk.content));
console.log();
