import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const depConstraints = [
  { sourceTag: 'type:composition', onlyDependOnLibsWithTags: ['type:app', 'type:core', 'type:plumbing'] },
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:core', 'type:plumbing'] },
  { sourceTag: 'type:plumbing', onlyDependOnLibsWithTags: ['type:core', 'type:plumbing'] },
  { sourceTag: 'type:core', onlyDependOnLibsWithTags: ['type:core'] },
];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/.data/**', 'libs/proto/src/gen/**', 'apps/*/src/generated/**', '**/*.js', '**/*.mjs'] },
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
    },
  },
  {
    // Apps never import apps, except the embedded composition root, whose job is to start every app's
    // exported start(config) in one process.
    files: ['apps/embedded/**/*.ts', 'deploy/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': ['error', { allow: ['@sbc/proto/*', '@sbc/app-*'], depConstraints }],
    },
  },
  {
    files: ['**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
