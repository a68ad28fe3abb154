import { SCOPES, type Scope } from '@sbc/scopes';
import type { KeyFormState } from './key-form';

const PRESETS = {
  gateway: 'Gateway (model calls only)',
  read_only: 'Read-only',
  full_access: 'Full access',
  custom: 'Chosen scopes',
} as const;

/** The fields a key is minted or edited with. */
export function KeyFields({ form, onChange }: { form: KeyFormState; onChange: (form: KeyFormState) => void }) {
  const set = (patch: Partial<KeyFormState>) => onChange({ ...form, ...patch });
  const toggle = (scope: Scope, on: boolean) =>
    set({ scopes: on ? [...form.scopes, scope] : form.scopes.filter((one) => one !== scope) });
  return (
    <>
      <label>
        Name
        <input required maxLength={64} value={form.name} onChange={(e) => set({ name: e.target.value })} />
      </label>
      <fieldset>
        <legend>Access</legend>
        {Object.entries(PRESETS).map(([value, label]) => (
          <label key={value} className="inline">
            <input
              type="radio"
              name="preset"
              value={value}
              checked={form.preset === value}
              onChange={() => set({ preset: value as KeyFormState['preset'] })}
            />
            {label}
          </label>
        ))}
      </fieldset>
      {form.preset === 'custom' && (
        <fieldset className="scopes">
          <legend>Scopes</legend>
          {SCOPES.filter((scope) => scope !== 'builds:admin').map((scope) => (
            <label key={scope} className="inline">
              <input
                type="checkbox"
                checked={form.scopes.includes(scope)}
                onChange={(e) => toggle(scope, e.target.checked)}
              />
              {scope}
            </label>
          ))}
        </fieldset>
      )}
      <label>
        Allowed models (blank for every model; globs like gpt-* work)
        <input value={form.allowedModels} onChange={(e) => set({ allowedModels: e.target.value })} />
      </label>
      <label>
        Allowed MCP tools (blank for every tool; server__tool globs like github__* work)
        <input value={form.allowedTools} onChange={(e) => set({ allowedTools: e.target.value })} />
      </label>
      <div className="row">
        <label>
          Daily cap (credits)
          <input
            type="number"
            min={0}
            step={1}
            inputMode="numeric"
            value={form.daily}
            onChange={(e) => set({ daily: e.target.value })}
          />
        </label>
        <label>
          Monthly cap (credits)
          <input
            type="number"
            min={0}
            step={1}
            inputMode="numeric"
            value={form.monthly}
            onChange={(e) => set({ monthly: e.target.value })}
          />
        </label>
      </div>
      <div className="row">
        <label>
          Requests per minute (blank for the service limit)
          <input
            type="number"
            min={1}
            step={1}
            inputMode="numeric"
            value={form.rpm}
            onChange={(e) => set({ rpm: e.target.value })}
          />
        </label>
        <label>
          Tokens per minute (blank for none)
          <input
            type="number"
            min={1}
            step={1}
            inputMode="numeric"
            value={form.tpm}
            onChange={(e) => set({ tpm: e.target.value })}
          />
        </label>
      </div>
      <div className="row">
        <label>
          Route
          <select value={form.route} onChange={(e) => set({ route: e.target.value as KeyFormState['route'] })}>
            <option value="auto">Auto (your endpoints, else credits)</option>
            <option value="byo">Your own endpoints only</option>
            <option value="credits">Credits only</option>
          </select>
        </label>
        <label>
          Mode
          <select value={form.mode} onChange={(e) => set({ mode: e.target.value as KeyFormState['mode'] })}>
            <option value="model">Model</option>
            <option value="agent">Agent</option>
          </select>
        </label>
      </div>
      <fieldset>
        <legend>Response cache</legend>
        <label>
          Keep replies for (seconds; blank for no cache)
          <input
            type="number"
            min={0}
            max={2_592_000}
            step={1}
            inputMode="numeric"
            value={form.cacheTtl}
            onChange={(e) => set({ cacheTtl: e.target.value })}
          />
        </label>
        <label className="inline">
          <input type="checkbox" checked={form.cacheTools} onChange={(e) => set({ cacheTools: e.target.checked })} />
          Cache replies that call tools too (a hit repeats the calls)
        </label>
      </fieldset>
    </>
  );
}
