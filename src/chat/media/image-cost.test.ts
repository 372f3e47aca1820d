/** The image-cost rules against the providers' own published examples. */
import { describe, expect, it } from 'vitest';
import { anthropicTokens, geminiTiles, imageTokens, maxImageTokens, openAiPatches, openAiTiles } from './image-cost.ts';

describe('provider_1 tiles (GPT-4o, GPT-4.1, o-series)', () => {
  it("OpenAI's examples: 1024×1024 is 4 tiles, 2048×4096 is 6, a small image 1; at most 8", () => {
    expect(openAiTiles({ width: 1024, height: 1024 })).toBe(4);
    expect(openAiTiles({ width: 2048, height: 4096 })).toBe(6);
    expect(openAiTiles({ width: 4096, height: 8192 })).toBe(6);
    expect(openAiTiles({ width: 128, height: 64 })).toBe(1); // scaled down only, never up
    expect(openAiTiles({ width: 768, height: 2048 })).toBe(8);
    expect(openAiTiles({ width: 513, height: 512 })).toBe(2);
    const cost = { formula: 'openai_tiles', max_tokens: 1445, base_tokens: 85, tile_tokens: 170, low_detail_tokens: 85 } as const;
    expect(imageTokens(cost, { width: 1024, height: 1024 }, 'high')).toBe(765);
    expect(imageTokens(cost, { width: 1024, height: 1024 }, undefined)).toBe(765);
    expect(imageTokens(cost, { width: 1024, height: 1024 }, 'low')).toBe(85);
    expect(maxImageTokens(cost, 'auto')).toBe(1445);
  });
});

describe('provider_1 patches (GPT-4.1 mini, o4-mini, GPT-5 mini, GPT-6)', () => {
  it("OpenAI's examples: 1024×1024 is 1,024 patches; 1800×2400 shrinks to 1,452", () => {
    expect(openAiPatches({ width: 1024, height: 1024 }, 1536)).toBe(1024);
    expect(openAiPatches({ width: 1800, height: 2400 }, 1536)).toBe(1452);
    expect(openAiPatches({ width: 2048, height: 2048 }, 2500)).toBe(2500);
    expect(openAiPatches({ width: 1, height: 100_000 }, 1536)).toBe(1536);
  });

  it('tokens are patches × multiplier rounded up; detail original uses its own budget', () => {
    const cost = { formula: 'openai_patches', max_tokens: 3000, patch_multiplier: 1.2, max_patches: 2500, original_max_patches: 10_000 } as const;
    expect(imageTokens(cost, { width: 100, height: 100 }, 'auto')).toBe(20); // 16 × 1.2 = 19.2
    expect(imageTokens(cost, { width: 4000, height: 4000 }, 'high')).toBe(3000);
    expect(imageTokens(cost, { width: 4000, height: 4000 }, 'original')).toBe(12_000);
    expect(imageTokens(cost, { width: 4000, height: 4000 }, 'low')).toBe(3000); // no low mode on patch models
    expect(maxImageTokens(cost, 'original')).toBe(12_000);
    const mini = { formula: 'openai_patches', max_tokens: 2489, patch_multiplier: 1.62, max_patches: 1536 } as const;
    expect(imageTokens(mini, { width: 1800, height: 2400 }, undefined)).toBe(2353); // 1,452 × 1.62 = 2,352.24
  });
});

describe('provider_2 pixels', () => {
  it("Anthropic's examples: 200×200 ≈ 54, 1000×1000 ≈ 1,334, 1092×1092 ≈ 1,590 tokens", () => {
    expect(anthropicTokens({ width: 200, height: 200 }, 1568, undefined)).toBe(54);
    expect(anthropicTokens({ width: 1000, height: 1000 }, 1568, undefined)).toBe(1334);
    expect(anthropicTokens({ width: 1092, height: 1092 }, 1568, undefined)).toBe(1590);
    // Long side scaled to 1568, short side rounded up: 3000×1000 → 1568×523.
    expect(anthropicTokens({ width: 3000, height: 1000 }, 1568, undefined)).toBe(1094);
    expect(anthropicTokens({ width: 300, height: 200 }, 2576, 28)).toBe(88);
    const cost = { formula: 'anthropic_pixels', max_tokens: 1600 } as const;
    expect(imageTokens(cost, { width: 8000, height: 8000 }, 'high')).toBe(1600);
  });
});

describe('provider_3 tiles (Gemini 2.x)', () => {
  it('both sides at most 384 px: one tile; otherwise 768px tiles', () => {
    expect(geminiTiles({ width: 384, height: 384 })).toBe(1);
    expect(geminiTiles({ width: 385, height: 100 })).toBe(1);
    expect(geminiTiles({ width: 1024, height: 1024 })).toBe(4);
    const cost = { formula: 'gemini_tiles', max_tokens: 4128 } as const;
    expect(imageTokens(cost, { width: 1024, height: 1024 }, undefined)).toBe(1032);
    expect(imageTokens(cost, { width: 9000, height: 9000 }, undefined)).toBe(4128);
  });
});
