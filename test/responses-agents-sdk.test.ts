/**
 * The OpenAI Agents SDK (@openai/agents), unchanged, through the gateway's Responses route: an agent
 * with one function tool runs to its final answer on a provider_1 model (native) and a provider_2
 * model (translated), streamed and not; the user sees the answer, is charged exactly, and each turn is a job.
 */
import { Agent, OpenAIProvider, Runner, tool } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { costMicro, startClientsHarness, type ClientsHarness } from './helpers/responses-clients.ts';

let h: ClientsHarness;
let runner: Runner;
beforeAll(async () => {
  h = await startClientsHarness();
  const openAIClient = new OpenAI({ apiKey: h.key, baseURL: h.baseUrl, maxRetries: 0 });
  // No global state (the default client, tracing): the runner carries the gateway's client, and traces stay off (they would go to the network).
  runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient, useResponses: true }), tracingDisabled: true });
});
afterAll(async () => h.close());
beforeEach(() => {
  h.openai.reset();
  h.anthropic.reset();
  h.gemini.reset();
});

const MODELS = [
  { model: 'gpt-test', provider: 'openai' },
  { model: 'claude-test', provider: 'anthropic' },
  { model: 'gemini-test', provider: 'gemini' },
] as const;

function weatherAgent(model: string, calls: string[]): Agent {
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      calls.push(city);
      return `sunny and 21C in ${city}`;
    },
  });
  return new Agent({ name: 'Weather', instructions: 'Answer questions about the weather with the tool.', model, tools: [getWeather] });
}

describe.each(MODELS)('the Agents SDK on $model ($provider)', ({ model, provider }) => {
  for (const stream of [false, true]) {
    it(`an agent with one function tool runs to its final answer${stream ? ', streamed' : ''}`, async () => {
      const emu = h[provider];
      emu.enqueue({ kind: 'tool_calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }], usage: { input: 40, output: 12 } });
      emu.enqueue({ kind: 'text', text: 'It is sunny and 21C in Paris.', usage: { input: 60, output: 9 } });
      const before = await h.balance();
      const calls: string[] = [];
      const agent = weatherAgent(model, calls);

      let finalOutput: unknown;
      let lastResponseId: string | undefined;
      if (stream) {
        const result = await runner.run(agent, 'What is the weather in Paris?', { stream: true });
        let text = '';
        for await (const event of result.toTextStream()) text += event;
        await result.completed;
        expect(text).toBe('It is sunny and 21C in Paris.');
        finalOutput = result.finalOutput;
        lastResponseId = result.lastResponseId;
      } else {
        const result = await runner.run(agent, 'What is the weather in Paris?');
        finalOutput = result.finalOutput;
        lastResponseId = result.lastResponseId;
      }

      expect(finalOutput).toBe('It is sunny and 21C in Paris.');
      expect(calls).toEqual(['Paris']);
      // The tool's result reached the model on the second turn.
      expect(emu.requests).toHaveLength(2);
      expect(JSON.stringify(emu.requests[1]?.body)).toContain('sunny and 21C in Paris');
      // Two turns, each billed at the fixture prices to the micro-credit.
      expect(await h.balance()).toBe(before - costMicro(40, 12) - costMicro(60, 9));
      expect(lastResponseId).toMatch(/^resp_/);
      const job = await h.job(lastResponseId as string);
      expect(job).toMatchObject({ status: 'succeeded', model, cost_credits: costMicro(60, 9) / 1e6 });
      expect(job.usage).toMatchObject({ prompt_tokens: 60, completion_tokens: 9 });
    });
  }

  it('a second run continues the first by previousResponseId: the gateway sends the whole conversation', async () => {
    const emu = h[provider];
    emu.enqueue({ kind: 'text', text: 'Noted: your name is Ada.', usage: { input: 20, output: 6 } });
    emu.enqueue({ kind: 'text', text: 'Your name is Ada.', usage: { input: 34, output: 5 } });
    const before = await h.balance();
    const agent = new Agent({ name: 'Memory', instructions: 'Remember what the user says.', model });
    const first = await runner.run(agent, 'My name is Ada.');
    const second = await runner.run(agent, 'What is my name?', { previousResponseId: first.lastResponseId });
    expect(second.finalOutput).toBe('Your name is Ada.');
    // The client sent only the new question; the provider got the first turn too.
    const continued = JSON.stringify(emu.requests[1]?.body);
    expect(continued).toContain('My name is Ada.');
    expect(continued).toContain('Noted: your name is Ada.');
    expect(continued).toContain('What is my name?');
    expect(await h.balance()).toBe(before - costMicro(20, 6) - costMicro(34, 5));
  });
});
