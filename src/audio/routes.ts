/**
 * The audio routes: uploads and transcriptions read multipart bodies (their own plugin
 * scope, so no other route parses multipart), speech takes JSON, and an upload's URL is
 * served without a key.
 */
import type { FastifyInstance } from 'fastify';
import type { AudioRouteDeps } from './audio-run.ts';
import { acceptMultipart } from './multipart.ts';
import { registerSpeechRoute } from './speech.ts';
import { registerTranscriptionRoute } from './transcriptions.ts';
import { registerUploadDownload, registerUploadRoute, type VoiceSamples } from './uploads.ts';

export async function registerAudioRoutes(app: FastifyInstance, deps: AudioRouteDeps & { samples: VoiceSamples }): Promise<void> {
  await app.register(async (scope) => {
    await acceptMultipart(scope);
    registerUploadRoute(scope, deps.samples);
    registerTranscriptionRoute(scope, deps);
  });
  registerSpeechRoute(app, deps);
  registerUploadDownload(app, deps.samples);
}
