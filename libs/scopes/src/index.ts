export {
  effectiveScopes,
  isScope,
  LEGACY_SCOPES,
  missingScopes,
  OPERATOR_SCOPES,
  PRESETS,
  presetScopes,
  SCOPES,
  TEAM_KEY_EXCLUDED,
  type Preset,
  type Scope,
} from './scopes';
