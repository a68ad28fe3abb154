import type { ReasoningBlock } from '../ir';

/**
 * Responses callers replay reasoning through one opaque field, `encrypted_content`. OpenAI fills it with its
 * own ciphertext; when the reasoning came from Anthropic, the gateway fills it with the thinking signature
 * (or redacted data) behind a marker, so a Responses client (Codex) that replays its reasoning items lets the
 * Anthropic renderer send the thinking block back unchanged, as Anthropic requires mid tool-use.
 *
 * Anything without the marker is OpenAI's and is marked origin `openai`: it never reaches Anthropic as thinking.
 * OpenAI ciphertext starts `gAAAA` (Fernet), so it cannot carry the marker by chance.
 */
const SIGNED_MARKER = 'sbc.anthropic.thinking:';
const REDACTED_MARKER = 'sbc.anthropic.redacted:';

/** The `encrypted_content` to show a Responses caller for a reasoning block, if any. */
export function encryptedContentOf(block: ReasoningBlock): string | undefined {
  if (block.origin === 'anthropic') {
    if (block.redacted !== undefined) return REDACTED_MARKER + block.redacted;
    return block.signature ? SIGNED_MARKER + block.signature : undefined;
  }
  return block.signature;
}

/** A replayed reasoning item back into a neutral block. */
export function reasoningFromItem(
  text: string,
  encryptedContent: string | undefined,
  itemId: string | undefined,
): ReasoningBlock {
  const block: ReasoningBlock = { type: 'reasoning', text, origin: 'openai' };
  if (encryptedContent?.startsWith(SIGNED_MARKER)) {
    block.origin = 'anthropic';
    block.signature = encryptedContent.slice(SIGNED_MARKER.length);
  } else if (encryptedContent?.startsWith(REDACTED_MARKER)) {
    block.origin = 'anthropic';
    block.redacted = encryptedContent.slice(REDACTED_MARKER.length);
  } else if (encryptedContent) {
    block.signature = encryptedContent;
  }
  if (itemId !== undefined) block.itemId = itemId;
  return block;
}
