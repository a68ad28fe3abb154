#!/usr/bin/env bash
# One call in each dialect with nothing but curl. SBC_MODEL is `house` (a house model) or
# `my-engine/<model>` (a model of your custom endpoint).
set -euo pipefail
: "${SBC_BASE_URL:=http://localhost:8080}"
: "${SBC_MODEL:=house}"

# OpenAI chat completions
curl -sS --fail-with-body "$SBC_BASE_URL/v1/chat/completions" \
  -H "authorization: Bearer $SBC_API_KEY" \
  -H "content-type: application/json" \
  -d "{\"model\": \"$SBC_MODEL\", \"messages\": [{\"role\": \"user\", \"content\": \"Say hello\"}]}"
echo

# Anthropic messages (same key, sent as x-api-key)
curl -sS --fail-with-body "$SBC_BASE_URL/v1/messages" \
  -H "x-api-key: $SBC_API_KEY" \
  -H "anthropic-version: 2023-06-01" \
  -H "content-type: application/json" \
  -d "{\"model\": \"$SBC_MODEL\", \"max_tokens\": 64, \"messages\": [{\"role\": \"user\", \"content\": \"Say hello\"}]}"
echo
