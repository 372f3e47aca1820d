import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'bench/results/**', 'coverage/**', 'scratch/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // CommonJS configuration files (.dependency-cruiser.cjs).
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', performance: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', setImmediate: 'readonly', queueMicrotask: 'readonly', structuredClone: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  // The admin dashboard and the portal run in the browser (typechecked by dashboard/ and portal/tsconfig.json).
  {
    files: ['dashboard/**/*.{ts,tsx}', 'portal/**/*.{ts,tsx}', 'web-shared/**/*.{ts,tsx}'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly', location: 'readonly', navigator: 'readonly', sessionStorage: 'readonly', fetch: 'readonly', Headers: 'readonly', URL: 'readonly', URLSearchParams: 'readonly', ResizeObserver: 'readonly', HTMLDivElement: 'readonly', HTMLButtonElement: 'readonly', addEventListener: 'readonly', removeEventListener: 'readonly', setTimeout: 'readonly' } },
  },
  // CommonJS tool configurations (.dependency-cruiser.cjs).
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },
);
