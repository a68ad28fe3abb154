#!/usr/bin/env bash
# Add your own OpenAI- or Anthropic-compatible model server as a custom endpoint. The gateway probes it and
# lists its models as `my-engine/<model>` (run once: the slug is then taken).
set -euo pipefail
: "${SBC_BASE_URL:=http://localhost:8080}"
curl -sS --fail-with-body "$SBC_BASE_URL/v1/upstreams" \
  -H "authorization: Bearer $SBC_API_KEY" \
  -H "content-type: application/json" \
  -d "{\"label\": \"My engine\", \"slug\": \"my-engine\", \"base_url\": \"$MY_ENGINE_URL\", \"api_key\": \"$MY_ENGINE_KEY\"}"
echo
