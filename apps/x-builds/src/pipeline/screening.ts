/**
 * The screen before any model call: refuses requests for harmful or abusive apps, each with a category the
 * stats count. Deterministic keyword rules, so a refusal is explainable and costs nothing; the audit checks
 * what the model actually wrote.
 */

export interface ScreenRefusal {
  category: string;
  reason: string;
}

const RULES: { category: string; reason: string; pattern: RegExp }[] = [
  { category: 'empty', reason: 'The request says nothing to build.', pattern: /^\W*$/ },
  {
    category: 'malware',
    reason: 'Apps that steal data, spread malware or attack systems are not built.',
    pattern: new RegExp(
      String.raw`\b(keylogger|ransomware|malware|botnet|credential[- ]?(stealer|harvest\w*)|` +
        String.raw`steal (passwords?|credentials|cookies)|crypto ?miner|ddos)\b`,
      'i',
    ),
  },
  {
    category: 'phishing',
    reason: 'Apps that impersonate a login or collect credentials are not built.',
    pattern: /\b(phishing|fake (login|sign[- ]?in)|clone of (the )?\w+ login)\b/i,
  },
  {
    category: 'sexual',
    reason: 'Sexual content is not built.',
    pattern: /\b(porn\w*|nsfw|nude|sexual|explicit sex)\b/i,
  },
  {
    category: 'self_harm',
    reason: 'Content that encourages self-harm is not built.',
    pattern: /\b(suicide|self[- ]harm|kill (myself|yourself))\b/i,
  },
  {
    category: 'violence',
    reason: 'Content that plans or glorifies real violence is not built.',
    pattern: /\b(build a (bomb|weapon)|how to make (a )?(bomb|explosive)|mass shooting)\b/i,
  },
  {
    category: 'hate',
    reason: 'Hateful content is not built.',
    pattern: /\b(genocide|ethnic cleansing|racial slur|white power|hate (speech|group))\b/i,
  },
  {
    category: 'harassment',
    reason: 'Apps that target, track or expose people are not built.',
    pattern: /\b(doxx?\w*|stalk\w*|harass\w*|track (my|his|her) (ex|partner|wife|husband))\b/i,
  },
];

export function screenRequest(prompt: string): ScreenRefusal | undefined {
  for (const rule of RULES) if (rule.pattern.test(prompt)) return { category: rule.category, reason: rule.reason };
  return undefined;
}
