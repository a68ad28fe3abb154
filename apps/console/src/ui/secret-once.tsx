import { useState } from 'react';
import type { MintedKey } from '../api/types';

/** A key's secret, right after minting: shown this once, with a copy button. */
export function SecretOnce({ minted, onDone }: { minted: MintedKey; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div role="status" className="secret">
      <p>
        Your new key <strong>{minted.name}</strong>. It is shown this once: copy it now.
      </p>
      <label>
        Secret key
        <input readOnly value={minted.key} onFocus={(e) => e.target.select()} />
      </label>
      <div className="actions">
        <button
          type="button"
          onClick={() =>
            void navigator.clipboard?.writeText(minted.key).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? 'Copied' : 'Copy key'}
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
