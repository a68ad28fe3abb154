import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const depConstraints = [
  // End-to-end suites boot the real apps (and the embedded composition root) as a caller meets them.
  { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:composition', 'type:app', 'type:core', 'type:plumbing'] },
  { sourceTag: 'type:composition', onlyDependOnLibsWithTags: ['type:app', 'type:core', 'type:plumbing'] },
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:core', 'type:plumbing'] },
  { sourceTag: 'type:plumbing', onlyDependOnLibsWithTags: ['type:core', 'type:plumbing'] },
  { sourceTag: 'type:core', onlyDependOnLibsWithTags: ['type:core'] },
];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '**/.data/**',
      'libs/proto/src/gen/**',
      'apps/*/src/generated/**',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: ['@sbc/proto/*'],
          depConstraints,
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
      // Prettier keeps code to 120 columns but leaves comments and strings as written; this holds them to it too.
      'max-len': ['error', { code: 120, tabWidth: 2 }],
    },
  },
  {
    // Apps never import apps, except the embedded composition root, whose job is to start every app's
    // exported start(config) in one process, and the end-to-end suites, which boot them as a caller meets them.
    files: ['apps/embedded/**/*.ts', 'deploy/**/*.ts', 'e2e/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': ['error', { allow: ['@sbc/proto/*', '@sbc/app-*'], depConstraints }],
    },
  },
  {
    files: ['**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
