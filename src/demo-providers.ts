/**
 * Providers for `npm run demo`: none until the chat route and its emulators land.
 */
export interface DemoProviders {
  env: Record<string, string>;
  description: string;
  close(): Promise<void>;
}

export async function startDemoProviders(): Promise<DemoProviders> {
  return { env: {}, description: 'none configured (the chat route is not built yet)', close: async () => {} };
}
