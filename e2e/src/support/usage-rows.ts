/** A row of `GET /v1/usage/requests`, the fields the tests read. */
export interface UsageRow {
  /** The usage event id. */
  id: string;
  request_id: string;
  status: number;
  native_tokens_prompt: number;
  native_tokens_completion: number;
  credits_charged: number;
  /** The target that answered (`house`, `byo:<slug>`, …). */
  served_by: string;
  /** Upstream attempts across the call's targets and fallback models. */
  attempts: number;
}

/** Every usage row of the key's owner, as the ledger holds them now, page by page. */
export async function usageRows(edgeUrl: string, key: string): Promise<UsageRow[]> {
  const rows: UsageRow[] = [];
  for (let after = ''; ;) {
    const res = await fetch(`${edgeUrl}/v1/usage/requests?limit=100${after ? `&after_id=${after}` : ''}`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(10_000),
    });
    if (res.status !== 200) throw new Error(`GET /v1/usage/requests answered ${res.status}: ${await res.text()}`);
    const page = (await res.json()) as { data: UsageRow[]; has_more: boolean; last_id: string };
    rows.push(...page.data);
    if (!page.has_more) return rows;
    after = page.last_id;
  }
}
