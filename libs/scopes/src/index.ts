export { effectiveScopes, isScope, LEGACY_SCOPES, missingScopes, PRESETS, SCOPES, TEAM_KEY_EXCLUDED, type Preset, type Scope } from './scopes';
