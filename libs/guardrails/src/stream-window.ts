import { verdictOf, type Finding, type TextVerdict } from './detectors';

/**
 * How many characters of a streamed text a guardrail holds back, at most: what it has not yet released can still
 * be redacted or block the stream when the rest of a match arrives. Every built-in detector's longest match fits
 * (an e-mail address is at most 318 characters); a match longer than this (a very long operator pattern's) is
 * caught only where all of it is in the window at once.
 */
export const STREAM_WINDOW_CHARS = 512;

/**
 * A sliding window over one streamed text (a reply's text, one tool call's arguments): deltas go in, and what comes
 * out is the text more than the window behind the stream's head, redacted. A `block` finding anywhere in the
 * window is reported at once, before any of it is released.
 */
export class WindowScanner {
  private held = '';

  constructor(
    private readonly scan: (text: string) => Finding[],
    private readonly window = STREAM_WINDOW_CHARS,
  ) {}

  /** Characters received and not yet released. */
  get heldChars(): number {
    return this.held.length;
  }

  /** One delta in: the text to release now ('' while the window fills), or a block. */
  push(delta: string): TextVerdict {
    this.held += delta;
    const findings = this.scan(this.held);
    const block = findings.find((finding) => finding.action === 'block');
    if (block) return { text: '', block, redactions: [], logs: [] };
    if (this.held.length <= this.window) return { text: '', redactions: [], logs: [] };
    let cut = this.held.length - this.window;
    // A finding across the cut is released whole, so it is redacted whole.
    for (let moved = true; moved;) {
      moved = false;
      for (const finding of findings)
        if (finding.start < cut && finding.end > cut) {
          cut = finding.end;
          moved = true;
        }
    }
    return this.release(cut, findings);
  }

  /** The end of the text: everything held is released, redacted, or the block found in it. */
  flush(): TextVerdict {
    const findings = this.scan(this.held);
    const block = findings.find((finding) => finding.action === 'block');
    if (block) return { text: '', block, redactions: [], logs: [] };
    return this.release(this.held.length, findings);
  }

  private release(cut: number, findings: readonly Finding[]): TextVerdict {
    const released = this.held.slice(0, cut);
    this.held = this.held.slice(cut);
    return verdictOf(
      released,
      findings.filter((finding) => finding.end <= cut),
    );
  }
}
